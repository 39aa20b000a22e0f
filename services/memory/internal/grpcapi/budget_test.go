package grpcapi

import (
	"context"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/slots"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// wholeReads is a store that counts the threads it has read with their
// turns.
type wholeReads struct {
	memory.Store
	n atomic.Int64
}

func (w *wholeReads) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	t, err := w.Store.Get(ctx, id, now)
	if err == nil {
		w.n.Add(1)
	}
	return t, err
}

func (w *wholeReads) GetWithin(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, bool,
	error) {
	t, heavier, err := w.Store.GetWithin(ctx, id, now, max)
	if err == nil && !heavier {
		w.n.Add(1)
	}
	return t, heavier, err
}

// countingExport is an export's stream that notes, at each thread it
// sends, how many threads memory had read whole by then.
type countingExport struct {
	grpc.ServerStreamingServer[memoryv1.ExportThreadsResponse]
	ctx   context.Context
	reads *wholeReads
	seen  []int64
}

func (c *countingExport) Context() context.Context { return c.ctx }

func (c *countingExport) Send(*memoryv1.ExportThreadsResponse) error {
	c.seen = append(c.seen, c.reads.n.Load())
	return nil
}

// An export of every thread reads each as it sends it: it read a hundred
// at a time, turns and all, so that one export of a client's threads at
// their weight's bound held 3 GB.
func TestAnExportReadsOneThreadAtATime(t *testing.T) {
	t.Parallel()
	store := &wholeReads{Store: memstore.New()}
	srv := New(memory.NewService(store, time.Hour, 10), slog.New(slog.DiscardHandler))
	alice := auth.WithClient(t.Context(), "alice")
	for range 4 {
		createThread(t, srv, alice, "q")
	}
	store.n.Store(0)
	export := &countingExport{ctx: alice, reads: store}
	if err := srv.ExportThreads(&memoryv1.ExportThreadsRequest{}, export); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int64{1, 2, 3, 4}, export.seen); diff != "" {
		t.Errorf("threads read whole by each send (-want +got):\n%s", diff)
	}
}

// createThread creates a thread of one turn, content, for ctx's client.
func createThread(t *testing.T, srv *Server, ctx context.Context, content string) string {
	t.Helper()
	created, err := srv.CreateThread(ctx, &memoryv1.CreateThreadRequest{ToolName: "chat",
		Turns: []*memoryv1.Turn{{Role: memoryv1.Role_ROLE_USER, Content: content}}})
	if err != nil {
		t.Fatal(err)
	}
	return created.GetThread().GetThreadId()
}

// heldThread is a store whose reads of one thread wait until released: a
// read memory is still working on.
type heldThread struct {
	memory.Store
	id      string
	release <-chan struct{}
}

func (h *heldThread) GetWithin(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, bool,
	error) {
	t, heavier, err := h.Store.GetWithin(ctx, id, now, max)
	if id == h.id && !heavier {
		<-h.release
	}
	return t, heavier, err
}

// Whole-thread reads share one budget of weight in the process, whichever
// client they are for: per-client slots let each client read 8 threads of
// each kind at once, each up to about 100 MB of memory's at the weight's
// bound, and clients without number. A read weighs its thread and the
// ancestors it reads with it, before it reads them; one that does not fit
// waits its turn, up to readWait. Calls' prepares have a budget of their
// own; an export weighs its thread alone, which it sends without its
// ancestors, and holds no room while its client takes it; a read refused
// gives its slot back.
func TestWholeThreadReadsShareOneBudget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &heldThread{Store: memstore.New()}
		srv := New(memory.NewService(store, time.Hour, 10), slog.New(slog.DiscardHandler))
		// Heavier than a read's first guess (1 MiB), and two past the
		// budget; one beside the guess of a read of a light thread fits.
		const text = 5<<18 + 64<<10
		srv.reads.budget = slots.NewBudget(5 << 19)
		alice := auth.WithClient(t.Context(), "alice")
		bob := auth.WithClient(t.Context(), "bob")
		heavy := createThread(t, srv, alice, strings.Repeat("a", text))
		bobs := createThread(t, srv, bob, strings.Repeat("b", text))
		branched, err := srv.BranchThread(bob, &memoryv1.BranchThreadRequest{ThreadId: bobs})
		if err != nil {
			t.Fatal(err)
		}
		branch := branched.GetThread().GetThreadId()

		release := make(chan struct{})
		store.id, store.release = heavy, release
		alicesRead := make(chan error, 1)
		go func() {
			_, err := srv.GetThread(alice, &memoryv1.GetThreadRequest{ThreadId: heavy})
			alicesRead <- err
		}()
		synctest.Wait()
		exported := &countingExport{ctx: bob, reads: &wholeReads{}}
		if err := srv.ExportThreads(&memoryv1.ExportThreadsRequest{ThreadId: branch}, exported); err != nil ||
			len(exported.seen) != 1 {
			t.Errorf("bob's export of his branch, which weighs little alone: %d sent, %v; want it at once",
				len(exported.seen), err)
		}
		// bob's branch weighs little; the parent it reads with it, as much
		// as alice's thread.
		answered := make(chan error, 1)
		go func() {
			_, err := srv.GetThread(bob, &memoryv1.GetThreadRequest{ThreadId: branch})
			answered <- err
		}()
		synctest.Wait()
		select {
		case err := <-answered:
			t.Fatalf("bob's read of a branch of a heavy thread beside alice's heavy read: ran at once (%v), "+
				"want it to wait for room", err)
		default:
		}
		call := &memoryv1.PrepareCallRequest{ThreadId: branch, ToolName: "chat"}
		if _, err := srv.PrepareCall(bob, call); err != nil {
			t.Errorf("bob's call while the reads' budget was taken: %v, want it prepared", err)
		}
		release <- struct{}{}
		if err := <-alicesRead; err != nil {
			t.Errorf("alice's read: %v", err)
		}
		if err := <-answered; err != nil {
			t.Errorf("bob's read once alice's had ended: %v", err)
		}

		go func() {
			_, _ = srv.GetThread(alice, &memoryv1.GetThreadRequest{ThreadId: heavy})
		}()
		synctest.Wait()
		start := time.Now()
		_, err = srv.GetThread(bob, &memoryv1.GetThreadRequest{ThreadId: bobs})
		if status.Code(err) != codes.ResourceExhausted || time.Since(start) != readWait {
			t.Errorf("a read that found no room: %v after %s, want ResourceExhausted after %s", err,
				time.Since(start), readWait)
		}
		for range threadReadsEach + 1 { // each gives its slot back
			_, err := srv.GetThread(bob, &memoryv1.GetThreadRequest{ThreadId: "not-a-thread"})
			if status.Code(err) != codes.NotFound {
				t.Fatalf("a read of no thread while the budget was taken: %v, want NotFound at once", err)
			}
		}
		release <- struct{}{}
		synctest.Wait()

		store.id = "" // alice's export reads at once, then waits for her to take it
		sending := make(chan struct{})
		defer close(sending)
		go func() {
			_ = srv.ExportThreads(&memoryv1.ExportThreadsRequest{ThreadId: heavy},
				&heldExport{ctx: alice, release: sending})
		}()
		synctest.Wait()
		if _, err := srv.GetThread(bob, &memoryv1.GetThreadRequest{ThreadId: bobs}); err != nil {
			t.Errorf("bob's read while alice's export waited for her to take it: %v, want it answered", err)
		}
	})
}

// Room that comes free in memory's budgets goes to the client served
// least recently (slots.Budget), each call counted for the client it is
// for: one client's queue of heavy reads, served in the order they came,
// kept another's read waiting for every one of them.
func TestAClientsQueuedReadsDoNotHoldUpAnothers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &heldThread{Store: memstore.New()}
		srv := New(memory.NewService(store, time.Hour, 10), slog.New(slog.DiscardHandler))
		const text = 5<<18 + 64<<10 // two do not fit in the budget
		srv.reads.budget = slots.NewBudget(5 << 19)
		alice := auth.WithClient(t.Context(), "alice")
		bob := auth.WithClient(t.Context(), "bob")
		alices := createThread(t, srv, alice, strings.Repeat("a", text))
		bobs := createThread(t, srv, bob, strings.Repeat("b", text))
		release := make(chan struct{})
		store.id, store.release = alices, release
		const queued = 3
		alicesReads := make(chan error, queued)
		defer func() { // before the test's context ends, which would end them
			for range queued {
				if err := <-alicesReads; err != nil {
					t.Errorf("alice's read: %v", err)
				}
			}
		}()
		for range queued {
			go func() {
				_, err := srv.GetThread(alice, &memoryv1.GetThreadRequest{ThreadId: alices})
				alicesReads <- err
			}()
			synctest.Wait()
		}
		answered := make(chan error, 1)
		go func() {
			_, err := srv.GetThread(bob, &memoryv1.GetThreadRequest{ThreadId: bobs})
			answered <- err
		}()
		synctest.Wait()
		for done := 1; done < queued; done++ {
			release <- struct{}{}
			synctest.Wait()
			select {
			case err := <-answered:
				if err != nil {
					t.Errorf("bob's read: %v", err)
				}
				for ; done < queued; done++ {
					release <- struct{}{}
				}
				return
			default:
			}
		}
		t.Errorf("bob's read still waited once %d of alice's %d reads queued before it had ended; want it to run "+
			"before her last", queued-1, queued)
		release <- struct{}{}
		<-answered
	})
}
