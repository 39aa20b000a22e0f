package grpcapi

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// heldExport is an export's stream whose sends wait until released: a
// client that takes its answer slowly, or has left while memory still
// works on it.
type heldExport struct {
	grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]
	ctx     context.Context
	release <-chan struct{}
}

func (h *heldExport) Context() context.Context { return h.ctx }

func (h *heldExport) Send(*memoryv1.ExportThreadsResponse) error {
	<-h.release
	return nil
}

// A client has at most threadReadsEach whole-thread reads running in
// memory at once, counted until memory's work on each ends, not until its
// caller leaves: clients that dropped reads of a 60 MB thread had memory
// read and decode 36 of them at once, 6.6 GB, slowing every other
// client's calls to seconds. Another read waits its turn, up to readWait,
// or gives up when its caller leaves; another client's does not wait, nor
// do the client's calls, whose prepares count apart.
func TestAClientsThreadReadsRunAFewAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := New(memory.NewService(memstore.New(), time.Hour, 10), slog.New(slog.DiscardHandler))
		alice := auth.WithClient(t.Context(), "alice")
		created, err := srv.CreateThread(alice, &memoryv1.CreateThreadRequest{ToolName: "chat",
			Turns: []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: "q"}}})
		if err != nil {
			t.Fatal(err)
		}
		id := created.GetThread().GetThreadId()
		read := &memoryv1.GetThreadRequest{ThreadId: id}
		release := make(chan struct{})
		defer close(release)
		leaving, leave := context.WithCancel(alice)
		for i := range threadReadsEach {
			ctx := alice
			if i == 0 {
				ctx = leaving
			}
			go func() {
				export := &heldExport{ctx: ctx, release: release}
				_ = srv.ExportThreads(&memoryv1.ExportThreadsRequest{ThreadId: id}, export)
			}()
		}
		synctest.Wait()
		leave() // its export still runs in memory, and is still counted

		waiting := make(chan error, 1)
		go func() {
			_, err := srv.GetThread(alice, read)
			waiting <- err
		}()
		gaveUp := make(chan error, 1)
		leavesWaiting, leaveWaiting := context.WithCancel(alice)
		go func() {
			_, err := srv.GetThread(leavesWaiting, read)
			gaveUp <- err
		}()
		synctest.Wait()
		select {
		case err := <-waiting:
			t.Fatalf("alice's read past %d ran at once (%v), want it to wait its turn", threadReadsEach, err)
		default:
		}
		bob := auth.WithClient(t.Context(), "bob")
		if _, err := srv.GetThread(bob, read); status.Code(err) != codes.NotFound {
			t.Errorf("bob's read while alice's were all running: %v, want it answered (not found: alice's)", err)
		}
		call := &memoryv1.PrepareCallRequest{ThreadId: id, ToolName: "chat"}
		if _, err := srv.PrepareCall(alice, call); err != nil {
			t.Errorf("alice's call while her exports held her reads: %v, want it prepared", err)
		}
		leaveWaiting()
		if err := <-gaveUp; status.Code(err) != codes.Canceled {
			t.Errorf("a read whose caller left while it waited: %v, want Canceled", err)
		}
		release <- struct{}{} // one export ends
		if err := <-waiting; err != nil {
			t.Errorf("alice's read once one of hers had ended: %v", err)
		}
		// All held again: one more waits readWait, then is refused.
		go func() {
			_ = srv.ExportThreads(&memoryv1.ExportThreadsRequest{ThreadId: id},
				&heldExport{ctx: alice, release: release})
		}()
		synctest.Wait()
		start := time.Now()
		_, err = srv.GetThread(alice, read)
		if status.Code(err) != codes.ResourceExhausted || time.Since(start) != readWait {
			t.Errorf("a read that found no slot: %v after %s, want ResourceExhausted after %s", err,
				time.Since(start), readWait)
		}
	})
}

// heldStore is a store whose reads wait until released: reads memory is
// still working on.
type heldStore struct {
	memory.Store
	release <-chan struct{}
}

func (h heldStore) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	<-h.release
	return h.Store.Get(ctx, id, now)
}

func (h heldStore) GetWithin(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, bool,
	error) {
	<-h.release
	return h.Store.GetWithin(ctx, id, now, max)
}

// A client's calls have threadReadsEach prepares at once: continued calls
// dropped as fast as they were sent had memory read a 60 MB thread 30
// times at once, 5 GB.
func TestAClientsCallsArePreparedAFewAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		defer close(release)
		store := memstore.New()
		srv := New(memory.NewService(heldStore{store, release}, time.Hour, 10), slog.New(slog.DiscardHandler))
		alice := auth.WithClient(t.Context(), "alice")
		created, err := srv.CreateThread(alice, &memoryv1.CreateThreadRequest{ToolName: "chat",
			Turns: []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: "q"}}})
		if err != nil {
			t.Fatal(err)
		}
		call := &memoryv1.PrepareCallRequest{ThreadId: created.GetThread().GetThreadId(), ToolName: "chat"}
		for range threadReadsEach {
			leaving, leave := context.WithCancel(alice)
			go func() { _, _ = srv.PrepareCall(leaving, call) }()
			leave() // their callers left; memory still reads
		}
		synctest.Wait()
		if _, err := srv.PrepareCall(alice, call); status.Code(err) != codes.ResourceExhausted {
			t.Errorf("a prepare past %d running: %v, want ResourceExhausted once it had waited", threadReadsEach, err)
		}
	})
}
