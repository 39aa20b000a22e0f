package call

import (
	"context"
	"log/slog"
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

// A continuation of a thread with too little weight left for an exchange
// is refused before any model call, as one past the turn limit is: the
// model ran, and its answer could not be kept.
func TestAThreadWithoutRoomIsRefusedBeforeTheModel(t *testing.T) {
	t.Parallel()
	const bound = 32 << 20
	chat := &Tool{Tool: &executorv1.Tool{Name: "chat"}}
	for _, c := range []struct {
		name      string
		limit     int64 // Limits.max_thread_weight
		weight    int64
		refused   bool
		saysWhich string
	}{
		{"room left", bound, bound / 2, false, ""},
		{"just room enough", bound, bound - minExchangeWeight, false, ""},
		{"a byte too little", bound, bound - minExchangeWeight + 1, true, "32 MiB"},
		{"a kilobyte left", bound, bound - 1000, true, "32 MiB"},
		{"at the bound", bound, bound, true, "32 MiB"},
		{"a memory that bounds none", 0, 0, false, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			prep := &memoryv1.PrepareCallResponse{Limits: &memoryv1.Limits{MaxTurns: 50, MaxThreadWeight: c.limit},
				RemainingTurns: 40, ThreadWeight: c.weight}
			out := fullThread(chat, "t-1", prep)
			if (out != nil) != c.refused {
				t.Fatalf("refused = %v, want %v", out != nil, c.refused)
			}
			if out == nil {
				return
			}
			msg := out.Reply.Content
			for _, want := range []string{c.saysWhich, "no model was called", "without continuation_id"} {
				if !strings.Contains(msg, want) {
					t.Errorf("the refusal %q does not say %q", msg, want)
				}
			}
		})
	}
}

// fullMemory answers PrepareCall with a thread at its weight.
type fullMemory struct {
	memoryv1.UnimplementedMemoryServiceServer
}

func (fullMemory) PrepareCall(context.Context, *memoryv1.PrepareCallRequest) (*memoryv1.PrepareCallResponse, error) {
	return &memoryv1.PrepareCallResponse{Limits: &memoryv1.Limits{MaxTurns: 50, MaxThreadWeight: 32 << 20},
		ToolName: "chat", RemainingTurns: 40, TurnCount: 10, ThreadWeight: 32<<20 - 100}, nil
}

// The runner reads the thread's weight from what memory prepared and ends
// the call there, before anything is executed.
func TestAContinuationOfAFullThreadEndsAtThePrepare(t *testing.T) {
	t.Parallel()
	r := NewRunner(Backends{Memory: memoryClient(t, fullMemory{})}, nil, files.Policy{}, DefaultOutputTokens,
		slog.New(slog.DiscardHandler))
	chat := &Tool{Tool: &executorv1.Tool{Name: "chat"}}
	prep, out, err := r.prepareMemory(t.Context(), chat, "t-1", nil)
	if err != nil || prep != nil || out == nil || !out.IsError {
		t.Fatalf("prepareMemory = %v, %+v, %v; want the call ended with an error reply", prep, out, err)
	}
	if !strings.Contains(out.Reply.Content, "is full") {
		t.Errorf("the reply %q does not say the thread is full", out.Reply.Content)
	}
}
