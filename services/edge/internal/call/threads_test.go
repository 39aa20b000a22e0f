package call

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"google.golang.org/protobuf/testing/protocmp"
)

// selectingMemory answers SelectHistory and records what it was asked.
type selectingMemory struct {
	memoryv1.UnimplementedMemoryServiceServer
	mu      sync.Mutex
	selects []*memoryv1.SelectHistoryRequest
}

func (m *selectingMemory) SelectHistory(_ context.Context, req *memoryv1.SelectHistoryRequest) (
	*memoryv1.SelectHistoryResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.selects = append(m.selects, req)
	return &memoryv1.SelectHistoryResponse{Turns: []*memoryv1.Turn{{Content: "selected again"}}, TotalTurns: 9}, nil
}

// TestConversationSelectsAgainOnlyForAnotherModel: the history PrepareCall
// selected is used when it was selected for the model the call runs with;
// only another model (the thread's model is gone, or its window changed),
// or no history at all, costs a second round trip.
func TestConversationSelectsAgainOnlyForAnotherModel(t *testing.T) {
	t.Parallel()
	llama := &memoryv1.ModelWindow{Model: "llama3.2", ContextWindow: 128_000}
	prepared := func(w *memoryv1.ModelWindow) *memoryv1.PrepareCallResponse {
		return &memoryv1.PrepareCallResponse{ToolName: "chat", Limits: &memoryv1.Limits{MaxTurns: 50},
			History: &memoryv1.History{ModelWindow: w, Turns: []*memoryv1.Turn{{Content: "prepared"}}, TotalTurns: 2}}
	}
	again := &executorv1.Conversation{ThreadId: "t", ToolName: "chat", MaxTurns: 50, TotalTurns: 9,
		Turns: []*memoryv1.Turn{{Content: "selected again"}}}
	kept := &executorv1.Conversation{ThreadId: "t", ToolName: "chat", MaxTurns: 50, TotalTurns: 2,
		Turns: []*memoryv1.Turn{{Content: "prepared"}}}
	for _, tc := range []struct {
		name       string
		prep       *memoryv1.PrepareCallResponse
		model      *routerv1.Model
		want       *executorv1.Conversation
		wantSelect []*memoryv1.SelectHistoryRequest
	}{
		{"the model it was selected for", prepared(llama),
			&routerv1.Model{Name: "llama3.2", ContextWindow: 128_000}, kept, nil},
		{"no model, at the window assumed for none", prepared(&memoryv1.ModelWindow{ContextWindow: noModelWindow}),
			nil, kept, nil},
		{"another model", prepared(llama), &routerv1.Model{Name: "gpt-5", ContextWindow: 400_000}, again,
			[]*memoryv1.SelectHistoryRequest{{ThreadId: "t", Model: "gpt-5", ContextWindow: 400_000}}},
		{"the same model with another window", prepared(llama),
			&routerv1.Model{Name: "llama3.2", ContextWindow: 64_000}, again,
			[]*memoryv1.SelectHistoryRequest{{ThreadId: "t", Model: "llama3.2", ContextWindow: 64_000}}},
		{"no history prepared", &memoryv1.PrepareCallResponse{ToolName: "chat", Limits: &memoryv1.Limits{MaxTurns: 50}},
			&routerv1.Model{Name: "llama3.2", ContextWindow: 128_000}, again,
			[]*memoryv1.SelectHistoryRequest{{ThreadId: "t", Model: "llama3.2", ContextWindow: 128_000}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mem := &selectingMemory{}
			r := NewRunner(Backends{Memory: memoryClient(t, mem)}, nil, files.Policy{}, DefaultOutputTokens, nil)
			got, err := r.conversation(t.Context(), "t", tc.prep, tc.model)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got, protocmp.Transform()); diff != "" {
				t.Errorf("conversation (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantSelect, mem.selects, protocmp.Transform()); diff != "" {
				t.Errorf("SelectHistory calls (-want +got):\n%s", diff)
			}
		})
	}
}

// A continuation of a thread with too little weight left for an exchange,
// or too few turns, is run and answered, as the reference does at the turn
// limit, and its exchange is not kept: unkeptExchange says why, and how to
// go on.
func TestAFullThreadsExchangeIsNotKept(t *testing.T) {
	t.Parallel()
	const bound = 32 << 20
	chat := &Tool{Tool: &executorv1.Tool{Name: "chat"}}
	debug := &Tool{Tool: &executorv1.Tool{Name: "debug", Workflow: true}}
	for _, c := range []struct {
		name          string
		tool          *Tool
		limit, weight int64 // Limits.max_thread_weight, the thread's
		remaining     int32
		saysWhich     string // "" when it is kept
	}{
		{"room left", chat, bound, bound / 2, 40, ""},
		{"just room enough", chat, bound, bound - minExchangeWeight, 40, ""},
		{"a byte too little", chat, bound, bound - minExchangeWeight + 1, 40, "32 MiB"},
		{"a kilobyte left", chat, bound, bound - 1000, 40, "32 MiB"},
		{"at the bound", chat, bound, bound, 40, "32 MiB"},
		{"a memory that bounds none", chat, 0, 0, 40, ""},
		{"two turns left", chat, bound, 0, 2, ""},
		{"one turn left", chat, bound, 0, 1, "limit of 50 turns"},
		{"one turn left, for a workflow's step", debug, bound, 0, 1, ""},
		{"no turn left", debug, bound, 0, 0, "limit of 50 turns"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prep := &memoryv1.PrepareCallResponse{Limits: &memoryv1.Limits{MaxTurns: 50, MaxThreadWeight: c.limit},
				RemainingTurns: c.remaining, ThreadWeight: c.weight}
			why := unkeptExchange(c.tool, prep)
			if (why != "") != (c.saysWhich != "") {
				t.Fatalf("unkept = %q, want it kept: %v", why, c.saysWhich == "")
			}
			if why == "" {
				return
			}
			for msg, wants := range map[string][]string{
				unkeptAnswer(why):                       {c.saysWhich, "not saved", "without continuation_id"},
				fullWorkflow(c.tool, why).Reply.Content: {c.saysWhich, "not run", "step_number 1"},
			} {
				for _, want := range wants {
					if !strings.Contains(msg, want) {
						t.Errorf("%q does not say %q", msg, want)
					}
				}
			}
		})
	}
}
