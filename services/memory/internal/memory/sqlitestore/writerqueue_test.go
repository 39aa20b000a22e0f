package sqlitestore

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"
	"time"
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

// waitHeld waits until a write of s holds its writer; first is that
// write's result, which must not come first.
func waitHeld(t *testing.T, s *Store, first <-chan error) {
	t.Helper()
	for len(s.writer) == 0 {
		select {
		case err := <-first:
			t.Fatalf("the first write did not wait for the lock: %v", err)
		default:
			runtime.Gosched()
		}
	}
}
