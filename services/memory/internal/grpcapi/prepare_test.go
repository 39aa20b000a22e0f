package grpcapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/memory/internal/memory/redisstore"
	"github.com/zenmcp/zen/services/memory/internal/memory/sqlitestore"
	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// stores opens each kind of store for a test.
var stores = []struct {
	name string
	open func(t *testing.T) memory.Store
}{
	{"memory", func(*testing.T) memory.Store { return memstore.New() }},
	{"sqlite", func(t *testing.T) memory.Store {
		s, err := sqlitestore.Open(filepath.Join(t.TempDir(), "memory.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
	{"redis", func(t *testing.T) memory.Store {
		s, err := redisstore.Open("redis://"+miniredis.RunT(t).Addr(), "", false)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}},
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestPrepareCallAnswersAContinuedCallInOne: what the edge needs for a
// continued call comes back from one PrepareCall, on every store: the
// limits, the thread's facts, the calling tool's workflow state, and the
// history selected for the model the call names or inherits.
func TestPrepareCallAnswersAContinuedCallInOne(t *testing.T) {
	t.Parallel()
	const content = "package main\n"
	sum := sha256.Sum256([]byte(content))
	sha := hex.EncodeToString(sum[:])
	gpt5 := &memoryv1.ModelWindow{Model: "gpt-5", ContextWindow: 400_000}
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			srv := New(memory.NewService(st.open(t), time.Hour, 6), slog.New(slog.DiscardHandler))
			ctx := auth.WithClient(t.Context(), "alice")
			state := mustStruct(t, map[string]any{"tool": "debug", "step": 1.0})
			created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{
				ToolName: "debug", InitialContext: mustStruct(t, map[string]any{"path": "/repo"}),
				Blobs: []*memoryv1.FileBlob{{Sha256: sha, Content: content}}, ModelWindow: gpt5,
				Turns: []*memoryv1.Turn{
					{Role: memoryv1.Role_ROLE_USER, Content: "step 1", ToolName: "debug",
						Files: []*memoryv1.FileRef{{Path: "/repo/main.go", Sha256: sha, SizeBytes: int32(len(content))}}},
					{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "looked", ToolName: "debug", ModelName: "gpt-5",
						WorkflowState: state},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			if got := created.GetRemainingTurns(); got != 4 {
				t.Errorf("CreateThread remaining_turns = %d, want 4", got)
			}
			id := created.GetThread().GetThreadId()
			appended, err := srv.AppendTurns(ctx, &memoryv1.AppendTurnsRequest{ThreadId: id, ModelWindow: gpt5,
				ExchangeId: uuid.NewString(), Turns: []*memoryv1.Turn{
					{Role: memoryv1.Role_ROLE_USER, Content: "and?", ToolName: "chat"},
					{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "so", ToolName: "chat", ModelName: "gpt-5"},
				}})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&memoryv1.AppendTurnsResponse{Accepted: true, TurnCount: 4, RemainingTurns: 2}, appended,
				protocmp.Transform()); diff != "" {
				t.Errorf("AppendTurns (-want +got):\n%s", diff)
			}
			limits := &memoryv1.Limits{MaxTurns: 6, TtlSeconds: 3600, MaxThreadWeight: memory.MaxThreadWeight}
			history := func(w *memoryv1.ModelWindow) *memoryv1.History {
				return &memoryv1.History{ModelWindow: w, TotalTurns: 4,
					Turns: []*memoryv1.Turn{
						{Role: memoryv1.Role_ROLE_USER, Content: "step 1", ToolName: "debug",
							Files: []*memoryv1.FileRef{{Path: "/repo/main.go", Sha256: sha, SizeBytes: int32(len(content))}}},
						{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "looked", ToolName: "debug", ModelName: "gpt-5"},
						{Role: memoryv1.Role_ROLE_USER, Content: "and?", ToolName: "chat"},
						{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "so", ToolName: "chat", ModelName: "gpt-5"},
					},
					Files: []*memoryv1.HistoryFile{{Path: "/repo/main.go", Sha256: sha, Content: content,
						SizeBytes: int32(len(content)), Tokens: 3}},
				}
			}
			continued := func(tool string, state *structpb.Struct, h *memoryv1.History) *memoryv1.PrepareCallResponse {
				return &memoryv1.PrepareCallResponse{Limits: limits, ToolName: "debug", LastModel: "gpt-5",
					InitialContext: mustStruct(t, map[string]any{"path": "/repo"}), RemainingTurns: 2, TurnCount: 4,
					WorkflowState: state, History: h}
			}
			for _, tc := range []struct {
				name string
				req  *memoryv1.PrepareCallRequest
				want *memoryv1.PrepareCallResponse
			}{
				{"a new call gets the limits", &memoryv1.PrepareCallRequest{ToolName: "chat"},
					&memoryv1.PrepareCallResponse{Limits: limits, RemainingTurns: 6}},
				{"the model inherited, at the window it answered with",
					&memoryv1.PrepareCallRequest{ThreadId: id, ToolName: "debug"}, continued("debug", state, history(gpt5))},
				{"the model named", &memoryv1.PrepareCallRequest{ThreadId: id, ToolName: "debug",
					ModelWindow: &memoryv1.ModelWindow{Model: "o3", ContextWindow: 200_000}},
					continued("debug", state, history(&memoryv1.ModelWindow{Model: "o3", ContextWindow: 200_000}))},
				{"another tool has no workflow state here", &memoryv1.PrepareCallRequest{ThreadId: id, ToolName: "chat"},
					continued("chat", nil, history(gpt5))},
			} {
				got, err := srv.PrepareCall(ctx, tc.req)
				if err != nil {
					t.Fatalf("%s: %v", tc.name, err)
				}
				// The memory package weighs threads (weight_test.go); here,
				// that a continued call is told what its thread weighs.
				if weighs := got.GetThreadWeight() > 0; weighs != (tc.req.GetThreadId() != "") {
					t.Errorf("%s: thread_weight = %d", tc.name, got.GetThreadWeight())
				}
				if diff := cmp.Diff(tc.want, got, protocmp.Transform(),
					protocmp.IgnoreFields(&memoryv1.Turn{}, "timestamp"),
					protocmp.IgnoreFields(&memoryv1.PrepareCallResponse{}, "thread_weight")); diff != "" {
					t.Errorf("%s (-want +got):\n%s", tc.name, diff)
				}
			}
		})
	}
}

// TestPrepareCallWithoutAKnownWindow: a thread whose model's window memory
// was never told (written before windows were kept, or by a tool that
// resolves its own models) comes back without a history, for the edge to
// select once it has resolved the model.
func TestPrepareCallWithoutAKnownWindow(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			srv := New(memory.NewService(st.open(t), time.Hour, 50), slog.New(slog.DiscardHandler))
			ctx := t.Context()
			created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{ToolName: "chat",
				Turns: []*memoryv1.Turn{
					{Role: memoryv1.Role_ROLE_USER, Content: "q"},
					{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "a", ModelName: "gpt-5"},
				}})
			if err != nil {
				t.Fatal(err)
			}
			got, err := srv.PrepareCall(ctx, &memoryv1.PrepareCallRequest{ThreadId: created.GetThread().GetThreadId(),
				ToolName: "chat"})
			if err != nil {
				t.Fatal(err)
			}
			want := &memoryv1.PrepareCallResponse{Limits: &memoryv1.Limits{MaxTurns: 50, TtlSeconds: 3600,
				MaxThreadWeight: memory.MaxThreadWeight}, ToolName: "chat", LastModel: "gpt-5", RemainingTurns: 48,
				TurnCount: 2}
			if diff := cmp.Diff(want, got, protocmp.Transform(),
				protocmp.IgnoreFields(&memoryv1.PrepareCallResponse{}, "thread_weight")); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrepareCallMissingThreadCarriesTheLimits: a thread that is not there
// for this client is NotFound, with the limits attached so the edge can
// say how long threads live without another round trip.
func TestPrepareCallMissingThreadCarriesTheLimits(t *testing.T) {
	t.Parallel()
	for _, st := range stores {
		t.Run(st.name, func(t *testing.T) {
			t.Parallel()
			srv := New(memory.NewService(st.open(t), 90*time.Minute, 50), slog.New(slog.DiscardHandler))
			created, err := srv.CreateThread(auth.WithClient(t.Context(), "alice"), &memoryv1.CreateThreadRequest{
				ToolName: "chat", Turns: []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: "q"}}})
			if err != nil {
				t.Fatal(err)
			}
			bob := auth.WithClient(t.Context(), "bob")
			for _, id := range []string{created.GetThread().GetThreadId(), uuid.NewString(), "not-a-uuid"} {
				_, err := srv.PrepareCall(bob, &memoryv1.PrepareCallRequest{ThreadId: id, ToolName: "chat"})
				s := status.Convert(err)
				if s.Code() != codes.NotFound {
					t.Fatalf("%s: %v, want NotFound", id, err)
				}
				want := []any{&memoryv1.Limits{MaxTurns: 50, TtlSeconds: 5400, MaxThreadWeight: memory.MaxThreadWeight}}
				if diff := cmp.Diff(want, s.Details(), protocmp.Transform()); diff != "" {
					t.Errorf("%s: details (-want +got):\n%s", id, diff)
				}
			}
		})
	}
}

// TestAppendAtTheLimitAnswersTheRemainingTurns: a refused append says how
// many turns the thread may still take.
func TestAppendAtTheLimitAnswersTheRemainingTurns(t *testing.T) {
	t.Parallel()
	srv := New(memory.NewService(memstore.New(), time.Hour, 3), slog.New(slog.DiscardHandler))
	ctx := context.Background()
	exchange := []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: "q"}, {Role: memoryv1.Role_ROLE_ASSISTANT,
		Content: "a"}}
	created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{ToolName: "chat", Turns: exchange})
	if err != nil {
		t.Fatal(err)
	}
	got, err := srv.AppendTurns(ctx, &memoryv1.AppendTurnsRequest{ThreadId: created.GetThread().GetThreadId(),
		Turns: exchange})
	if err != nil {
		t.Fatal(err)
	}
	want := &memoryv1.AppendTurnsResponse{Accepted: false, TurnCount: 2, RemainingTurns: 1}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

// exchangesSeen is a store that records the exchanges appends name.
type exchangesSeen struct {
	memory.Store
	mu   sync.Mutex
	seen []memory.Exchange
}

func (s *exchangesSeen) Append(ctx context.Context, id, clientID string, ex memory.Exchange, turns []memory.Turn,
	maxTurns int, now, expiresAt time.Time) (int, error) {
	s.mu.Lock()
	s.seen = append(s.seen, ex)
	s.mu.Unlock()
	return s.Store.Append(ctx, id, clientID, ex, turns, maxTurns, now, expiresAt)
}

// TestPrepareAndAppendAgreeOnWhereAnExchangeBegins: PrepareCall answers the
// thread's turn count, and an append that sends it back has the store look
// for its exchange from there.
func TestPrepareAndAppendAgreeOnWhereAnExchangeBegins(t *testing.T) {
	t.Parallel()
	store := &exchangesSeen{Store: memstore.New()}
	srv := New(memory.NewService(store, time.Hour, 10), slog.New(slog.DiscardHandler))
	ctx := context.Background()
	exchange := []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: "q"}, {Role: memoryv1.Role_ROLE_ASSISTANT,
		Content: "a"}}
	created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{ToolName: "chat", Turns: exchange})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetThread().GetThreadId()
	prep, err := srv.PrepareCall(ctx, &memoryv1.PrepareCallRequest{ThreadId: id, ToolName: "chat"})
	if err != nil {
		t.Fatal(err)
	}
	if n := prep.GetTurnCount(); n != 2 {
		t.Fatalf("PrepareCall's turn_count = %d, want 2", n)
	}
	_, err = srv.AppendTurns(ctx, &memoryv1.AppendTurnsRequest{ThreadId: id, Turns: exchange, ExchangeId: "x-1",
		TurnCountSeen: prep.GetTurnCount()})
	if err != nil {
		t.Fatal(err)
	}
	ignoreWeight := cmpopts.IgnoreFields(memory.Exchange{}, "Weight") // the memory package weighs (weight_test.go)
	if diff := cmp.Diff([]memory.Exchange{{ID: "x-1", After: 2}}, store.seen, ignoreWeight); diff != "" {
		t.Errorf("the exchanges the store was given (-want +got):\n%s", diff)
	}
}

// TestPrepareCallHistoryCarriesOnlyWhatACallReads: a call reads no
// timestamps and no model_metadata from its history, except the workflow
// state that threads written before Turn.workflow_state existed keep
// there; a thread read for inspection keeps all of it.
func TestPrepareCallHistoryCarriesOnlyWhatACallReads(t *testing.T) {
	t.Parallel()
	srv := New(memory.NewService(memstore.New(), time.Hour, 10), slog.New(slog.DiscardHandler))
	ctx := auth.WithClient(t.Context(), "alice")
	window := &memoryv1.ModelWindow{Model: "gpt-5", ContextWindow: 400_000}
	usage := mustStruct(t, map[string]any{"usage": map[string]any{"input_tokens": 3.0}})
	legacy := mustStruct(t, map[string]any{"workflow": map[string]any{"tool": "debug", "step": 2.0}})
	created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{ToolName: "debug", ModelWindow: window,
		Turns: []*memoryv1.Turn{
			{Role: memoryv1.Role_ROLE_USER, Content: "q", ToolName: "debug"},
			{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "old", ToolName: "debug", ModelName: "gpt-5",
				ModelMetadata: legacy},
			{Role: memoryv1.Role_ROLE_USER, Content: "q2", ToolName: "chat"},
			{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "new", ToolName: "chat", ModelName: "gpt-5",
				ModelMetadata: usage},
		}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetThread().GetThreadId()
	prepared, err := srv.PrepareCall(ctx, &memoryv1.PrepareCallRequest{ThreadId: id, ToolName: "debug"})
	if err != nil {
		t.Fatal(err)
	}
	metadata := func(turns []*memoryv1.Turn) []*structpb.Struct {
		var out []*structpb.Struct
		for _, turn := range turns {
			out = append(out, turn.GetModelMetadata())
		}
		return out
	}
	if diff := cmp.Diff([]*structpb.Struct{nil, legacy, nil, nil}, metadata(prepared.GetHistory().GetTurns()),
		protocmp.Transform()); diff != "" {
		t.Errorf("PrepareCall history metadata (-want +got):\n%s", diff)
	}
	got, err := srv.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]*structpb.Struct{nil, legacy, nil, usage}, metadata(got.GetThread().GetTurns()),
		protocmp.Transform()); diff != "" {
		t.Errorf("GetThread metadata (-want +got):\n%s", diff)
	}
	stamped := func(turns []*memoryv1.Turn) []bool {
		var out []bool
		for _, turn := range turns {
			out = append(out, turn.GetTimestamp() != nil)
		}
		return out
	}
	if diff := cmp.Diff([]bool{false, false, false, false}, stamped(prepared.GetHistory().GetTurns())); diff != "" {
		t.Errorf("PrepareCall history timestamps (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true, true, true}, stamped(got.GetThread().GetTurns())); diff != "" {
		t.Errorf("GetThread timestamps (-want +got):\n%s", diff)
	}
}
