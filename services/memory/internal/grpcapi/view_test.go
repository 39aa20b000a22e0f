package grpcapi

import (
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
)

// The basic view is the thread without its turns, and their count: what
// the thread browser polls every 2 s for each open thread, which read and
// sent the whole thread (a 30 MiB one, about 100 MB of memory's a poll).
func TestGetThreadsBasicViewLeavesTheTurnsOut(t *testing.T) {
	t.Parallel()
	srv := New(memory.NewService(memstore.New(), time.Hour, 50), slog.New(slog.DiscardHandler))
	ctx := auth.WithClient(t.Context(), "alice")
	created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{ToolName: "chat", Turns: []*memoryv1.Turn{
		{Role: memoryv1.Role_ROLE_USER, Content: "q"},
		{Role: memoryv1.Role_ROLE_ASSISTANT, Content: "a", ModelName: "gpt-5"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	id := created.GetThread().GetThreadId()
	full, err := srv.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.GetThread().GetTurns()) != 2 || full.GetTurnCount() != 2 || full.GetLastModel() != "gpt-5" {
		t.Errorf("the full view: %d turns, turn_count %d, last_model %q", len(full.GetThread().GetTurns()),
			full.GetTurnCount(), full.GetLastModel())
	}
	basic, err := srv.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id, View: memoryv1.ThreadView_THREAD_VIEW_BASIC})
	if err != nil {
		t.Fatal(err)
	}
	if full.GetWeight() == 0 {
		t.Error("the full view has no weight, want the thread's")
	}
	want := &memoryv1.GetThreadResponse{Thread: full.GetThread(), TurnCount: 2, Weight: full.GetWeight()}
	want.Thread.Turns = nil
	if diff := cmp.Diff(want, basic, protocmp.Transform()); diff != "" {
		t.Errorf("the basic view (-want +got):\n%s", diff)
	}
	_, err = srv.GetThread(auth.WithClient(t.Context(), "bob"), &memoryv1.GetThreadRequest{ThreadId: id,
		View: memoryv1.ThreadView_THREAD_VIEW_BASIC})
	if status.Code(err) != codes.NotFound {
		t.Errorf("bob's basic view of alice's thread: %v, want NotFound", err)
	}
}

// A full view asked within a weight (max_weight: what its reader made room
// for, by the basic view's) sends no thread that weighs more, nor does an
// export of it: it was written anew, heavier, since it was weighed.
func TestAThreadIsSentWithinTheWeightItWasAskedWithin(t *testing.T) {
	t.Parallel()
	srv := New(memory.NewService(memstore.New(), time.Hour, 50), slog.New(slog.DiscardHandler))
	ctx := auth.WithClient(t.Context(), "alice")
	id := createThread(t, srv, ctx, "question")
	basic, err := srv.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id, View: memoryv1.ThreadView_THREAD_VIEW_BASIC})
	if err != nil {
		t.Fatal(err)
	}
	weight := basic.GetWeight()
	for _, max := range []int64{weight, weight - 1} {
		_, err := srv.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id, MaxWeight: max})
		exported := &countingExport{ctx: ctx, reads: &wholeReads{}}
		exportErr := srv.ExportThreads(&memoryv1.ExportThreadsRequest{ThreadId: id, MaxWeight: max}, exported)
		want := codes.OK
		if max < weight {
			want = codes.FailedPrecondition
		}
		if status.Code(err) != want || status.Code(exportErr) != want {
			t.Errorf("a thread of %d read within %d: %v, exported: %v; want %v", weight, max, err, exportErr, want)
		}
	}
}
