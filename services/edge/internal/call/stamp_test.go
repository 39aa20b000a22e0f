package call

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestStampTurnsKeepsTheTrace: every turn of an exchange keeps its trace
// id beside what the executor recorded, so that a person reading the
// thread finds the trace of the call that wrote each turn.
func TestStampTurnsKeepsTheTrace(t *testing.T) {
	t.Parallel()
	usage, _ := structpb.NewStruct(map[string]any{"usage": map[string]any{"input_tokens": 3}})
	turns := []*memoryv1.Turn{
		{Role: memoryv1.Role_ROLE_USER, Content: "q"},
		{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "a", ModelMetadata: usage},
	}
	asked := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	stampTurns(turns, asked, asked.Add(time.Second), "0af7651916cd43dd8448eb211c80319c")
	var got []any
	for _, turn := range turns {
		got = append(got, turn.GetTimestamp().AsTime(), turn.GetModelMetadata().AsMap())
	}
	want := []any{
		asked, map[string]any{"trace_id": "0af7651916cd43dd8448eb211c80319c"},
		asked.Add(time.Second), map[string]any{"trace_id": "0af7651916cd43dd8448eb211c80319c",
			"usage": map[string]any{"input_tokens": 3.0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stamped turns (-want +got):\n%s", diff)
	}
}
