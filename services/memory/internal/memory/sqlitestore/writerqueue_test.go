package sqlitestore

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// A write queued behind another of this process's writes, which waits for
// a lock another process holds, gives up when its own context ends: it
// does not wait out the other write's busy timeout first. (database/sql's
// pool, which queued writers before, honours the context.)
func TestAQueuedWriteGivesUpWithItsContext(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	const busy = 10 * time.Second // the first write waits for the other process all the test long
	s, err := OpenWithTimeout(path, busy)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ctx := context.Background()
	now := time.Now().UTC()
	if err := s.Create(ctx, chatThread(now)); err != nil { // and the first sweep, out of the way
		t.Fatal(err)
	}
	tx := holdWriteLock(t, path)
	first := make(chan error, 1)
	go func() { first <- s.Create(ctx, chatThread(now)) }() // waits the busy timeout for the lock
	waitHeld(t, s, first)
	queued, cancel := context.WithCancel(ctx)
	second := make(chan error, 1)
	go func() { second <- s.Create(queued, chatThread(now)) }()
	cancel()
	if err := <-second; !errors.Is(err, context.Canceled) {
		t.Errorf("the queued write: %v, want it cancelled", err)
	}
	select {
	case err := <-first:
		t.Fatalf("the first write ended (%v) before the queued one gave up: the queued write waited for it", err)
	default:
	}
	// The other process lets go: the first write goes through.
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Errorf("the first write, once the lock was free: %v", err)
	}
}

// waitHeld waits until a write of s holds its writer and has taken its
// own job out of the queue; first is that write's result, which must not
// come first. Holding the writer is not enough: a write takes the queue
// after the writer, so writes queued in between would join its group,
// not wait behind it.
func waitHeld(t *testing.T, s *Store, first <-chan error) {
	t.Helper()
	for len(s.writer) == 0 || s.queue.len() != 0 {
		select {
		case err := <-first:
			t.Fatalf("the first write did not wait for the lock: %v", err)
		default:
			runtime.Gosched()
		}
	}
}

// endsMidway is a context that ends once it has been asked for its Done
// channel after times times: late enough to let a write begin, early
// enough to end it among its statements.
type endsMidway struct {
	context.Context
	asked, times atomic.Int32
	done         chan struct{}
	once         sync.Once
}

func (e *endsMidway) Done() <-chan struct{} {
	if e.asked.Add(1) > e.times.Load() {
		e.once.Do(func() { close(e.done) })
	}
	return e.done
}

func (e *endsMidway) Err() error {
	select {
	case <-e.done:
		return context.Canceled
	default:
		return nil
	}
}

// TestALongWriteEndsWithItsCaller: an import its caller gives up on while
// its statements run is interrupted and rolled back, not committed behind
// the caller's back; a short write (an append) runs its statements to the
// end once it has begun.
func TestALongWriteEndsWithItsCaller(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	now := time.Now().UTC()
	var threads []*memory.Thread
	for range 200 {
		th := chatThread(now)
		th.Turns = qa()
		threads = append(threads, th)
	}
	ctx := &endsMidway{Context: context.Background(), done: make(chan struct{})}
	ctx.times.Store(40)
	begun := s.transactions.Load()
	if err := s.Import(ctx, threads, false, now); !errors.Is(err, context.Canceled) {
		t.Fatalf("an import whose caller gave up midway: %v, want context.Canceled", err)
	}
	if n := s.transactions.Load() - begun; n != 1 {
		t.Fatalf("%d transactions began, want 1: the caller must give up among the import's statements", n)
	}
	for _, th := range []*memory.Thread{threads[0], threads[len(threads)-1]} {
		if _, err := s.Get(context.Background(), th.ID, now); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("thread %s of the abandoned import: %v, want it rolled back (not found)", th.ID, err)
		}
	}
}
