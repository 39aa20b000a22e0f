package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// heldWriter is a store whose first write waits for a lock another
// process holds, so that the writes after it queue.
type heldWriter struct {
	s       *Store
	other   *sql.Tx          // the other process's transaction, holding the lock
	first   <-chan error     // the waiting write's outcome
	cancel  func()           // ends the waiting write's context
	threads []*memory.Thread // created before the lock was taken
}

func holdWriter(t *testing.T, threads int) *heldWriter {
	t.Helper()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := OpenWithTimeout(path, time.Minute) // a write that waits out the lock fails the test by its length
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	h := &heldWriter{s: s}
	now := time.Now().UTC()
	for range threads {
		th := chatThread(now)
		if err := s.Create(context.Background(), th); err != nil { // the first also sweeps
			t.Fatal(err)
		}
		// Read, so that the store keeps its row and the groups' writes move it.
		if _, err := s.Get(context.Background(), th.ID, now); err != nil {
			t.Fatal(err)
		}
		h.threads = append(h.threads, th)
	}
	h.other = holdWriteLock(t, path)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	first := make(chan error, 1)
	go func() { first <- s.Create(ctx, chatThread(now)) }()
	waitHeld(t, s, first)
	h.first = first
	return h
}

// len is how many writes wait in q.
func (q *writeQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.jobs)
}

// waitQueued waits until n writes are queued. It fails rather than wait
// for ever when they cannot be: the first write ended, not waiting for
// the lock (seen once, in a CI run, as a hang), or the writes ran without
// queuing.
func (h *heldWriter) waitQueued(t *testing.T, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for h.s.queue.len() != n {
		select {
		case err := <-h.first:
			t.Fatalf("the first write ended (err %v) before %d writes queued behind it", err, n)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d writes queued after a minute, want %d", h.s.queue.len(), n)
		}
		runtime.Gosched()
	}
}

// release lets the other process go, and waits for the first write.
func (h *heldWriter) release(t *testing.T) {
	t.Helper()
	if err := h.other.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-h.first; err != nil {
		t.Fatalf("the first write: %v", err)
	}
}

// Appends that queue while the writer waits are committed in one
// transaction, and each gets its own count.
func TestQueuedWritesCommitTogether(t *testing.T) {
	t.Parallel()
	h := holdWriter(t, 1)
	id := h.threads[0].ID
	const appends = 8
	counts := make(chan int, appends)
	errs := make(chan error, appends)
	now := time.Now().UTC()
	for i := range appends {
		go func() {
			q := qa()
			n, err := h.s.Append(context.Background(), id, "", memory.Exchange{ID: fmt.Sprint("exchange-", i)}, q,
				100, now,
				now.Add(time.Hour))
			counts <- n
			errs <- err
		}()
	}
	h.waitQueued(t, appends)
	before := h.s.transactions.Load()
	h.release(t)
	var got []int
	for range appends {
		if err := <-errs; err != nil {
			t.Errorf("append: %v", err)
		}
		got = append(got, <-counts)
	}
	slices.Sort(got)
	if diff := cmp.Diff([]int{2, 4, 6, 8, 10, 12, 14, 16}, got); diff != "" {
		t.Errorf("counts the appends returned (-want +got):\n%s", diff)
	}
	if n := h.s.transactions.Load() - before; n != 2 {
		t.Errorf("the first write and the queued appends took %d transactions, want 2: one each", n)
	}
	th, err := h.s.Get(context.Background(), id, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(th.Turns) != 2*appends {
		t.Errorf("the thread holds %d turns, want %d", len(th.Turns), 2*appends)
	}
}

// A write that fails in a group takes back its own statements only: the
// others in its transaction commit.
func TestAFailedWriteInAGroupUndoesOnlyItsOwn(t *testing.T) {
	t.Parallel()
	h := holdWriter(t, 1)
	existing := h.threads[0]
	now := time.Now().UTC()
	a, b, c, d := chatThread(now), chatThread(now), chatThread(now), chatThread(now)
	errLogical := errors.New("the write's own error")
	writes := map[string]func(ctx context.Context) error{
		"a": func(ctx context.Context) error { return h.s.insert(ctx, a, false) },
		// b fails at a statement, which SQLite refuses without ending the transaction.
		"b": func(ctx context.Context) error {
			if err := h.s.insert(ctx, b, false); err != nil {
				return err
			}
			_, err := exec(ctx, h.s.writes.insertThread, existing.ID, "", "chat", "", 0, 0, 0, "null", 0, "", 0, "")
			return err
		},
		"c": func(ctx context.Context) error { return h.s.insert(ctx, c, false) },
		// d fails after its statements succeeded.
		"d": func(ctx context.Context) error {
			if err := h.s.insert(ctx, d, false); err != nil {
				return err
			}
			return errLogical
		},
	}
	errs := map[string]chan error{}
	for name, fn := range writes {
		done := make(chan error, 1)
		errs[name] = done
		go func() { done <- h.s.write(context.Background(), fn) }()
	}
	h.waitQueued(t, len(writes))
	before := h.s.transactions.Load()
	h.release(t)
	for _, name := range []string{"a", "c"} {
		if err := <-errs[name]; err != nil {
			t.Errorf("write %s: %v", name, err)
		}
	}
	if err := <-errs["b"]; err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Errorf("write b: %v, want its UNIQUE constraint failure", err)
	}
	if err := <-errs["d"]; !errors.Is(err, errLogical) {
		t.Errorf("write d: %v, want its own error", err)
	}
	if n := h.s.transactions.Load() - before; n != 2 {
		t.Errorf("the first write and the queued ones took %d transactions, want 2: one each", n)
	}
	for _, th := range []*memory.Thread{a, c, existing} {
		if _, err := h.s.Get(context.Background(), th.ID, now); err != nil {
			t.Errorf("thread %s: %v, want it kept", th.ID, err)
		}
	}
	for _, th := range []*memory.Thread{b, d} {
		if _, err := h.s.Get(context.Background(), th.ID, now); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("thread %s of a failed write: %v, want it not found", th.ID, err)
		}
	}
}

// A write whose caller leaves before it starts never runs; the others
// queued with it do.
func TestAWriteWhoseCallerLeftDoesNotRun(t *testing.T) {
	t.Parallel()
	h := holdWriter(t, 0)
	var ran atomic.Bool
	leaving, cancel := context.WithCancel(context.Background())
	left := make(chan error, 1)
	go func() {
		left <- h.s.write(leaving, func(context.Context) error { ran.Store(true); return nil })
	}()
	stays := make(chan error, 1)
	kept := chatThread(time.Now().UTC())
	go func() {
		stays <- h.s.write(context.Background(), func(ctx context.Context) error {
			return h.s.insert(ctx, kept, false)
		})
	}()
	h.waitQueued(t, 2)
	cancel()
	if err := <-left; !errors.Is(err, context.Canceled) {
		t.Errorf("the write whose caller left: %v, want context.Canceled", err)
	}
	h.release(t)
	if err := <-stays; err != nil {
		t.Errorf("the write queued beside it: %v", err)
	}
	if ran.Load() {
		t.Error("the write whose caller left ran")
	}
	if _, err := h.s.Get(context.Background(), kept.ID, time.Now().UTC()); err != nil {
		t.Errorf("the other write's thread: %v", err)
	}
}

// A group waiting for another process's lock stops waiting once all its
// callers have left, the one running the group among them: neither
// waits out the busy timeout, nor runs once the lock is free.
func TestAGroupStopsWaitingWhenItsCallersLeave(t *testing.T) {
	t.Parallel()
	h := holdWriter(t, 0)
	var ran atomic.Int32
	ctxs := make([]context.Context, 2)
	cancels := make([]func(), 2)
	errs := make(chan error, 2)
	for i := range ctxs {
		ctxs[i], cancels[i] = context.WithCancel(context.Background())
		go func() {
			errs <- h.s.write(ctxs[i], func(context.Context) error { ran.Add(1); return nil })
		}()
	}
	h.waitQueued(t, 2)
	h.cancel() // the first write gives up; one of the two takes the writer and both wait in one group
	if err := <-h.first; err == nil {
		t.Fatal("the first write went through with the lock held")
	}
	for h.s.queue.len() != 0 || len(h.s.writer) == 0 {
		runtime.Gosched()
	}
	for _, cancel := range cancels {
		cancel()
	}
	for range 2 {
		if err := <-errs; err == nil || errors.Is(err, memory.ErrUnavailable) {
			t.Errorf("a write whose caller left: %v, want it to end with its context, not the busy timeout", err)
		}
	}
	if err := h.other.Rollback(); err != nil {
		t.Fatal(err)
	}
	if n := ran.Load(); n != 0 {
		t.Errorf("%d writes ran after their callers left", n)
	}
}

// waitGroupTaken waits until the queue's writes are in a transaction that
// waits for the lock.
func (h *heldWriter) waitGroupTaken(t *testing.T) {
	t.Helper()
	for h.s.queue.len() != 0 || len(h.s.writer) == 0 {
		runtime.Gosched()
	}
}

// The caller whose turn it is to take the queue's writes can still leave
// while they wait for another process's lock: it does not wait, in
// others' stead, for the busy timeout.
func TestACallerCanLeaveTheGroupItTook(t *testing.T) {
	t.Parallel()
	h := holdWriter(t, 0)
	ours, cancel := context.WithCancel(context.Background())
	ourErr := make(chan error, 1)
	go func() { ourErr <- h.s.write(ours, func(context.Context) error { return nil }) }()
	h.waitQueued(t, 1)
	neighbour := make(chan error, 1)
	go func() { neighbour <- h.s.write(context.Background(), func(context.Context) error { return nil }) }()
	h.waitQueued(t, 2)
	h.cancel() // the first write gives up; one of the two takes the others' group
	if err := <-h.first; err == nil {
		t.Fatal("the first write went through with the lock held")
	}
	h.waitGroupTaken(t)
	cancel()
	if err := <-ourErr; !errors.Is(err, context.Canceled) {
		t.Errorf("a caller that left while its group waited: %v, want context.Canceled", err)
	}
	if err := h.other.Rollback(); err != nil {
		t.Fatal(err)
	}
	if err := <-neighbour; err != nil {
		t.Errorf("the neighbour, once the lock was free: %v", err)
	}
}

// A statement that makes SQLite end the whole transaction (here ON
// CONFLICT ROLLBACK; a full disk or an I/O error do the same) fails its
// own write with its own error; the writes grouped with it run again.
func TestAWriteThatEndsTheTransactionFailsAlone(t *testing.T) {
	t.Parallel()
	h := holdWriter(t, 1)
	existing, a := h.threads[0], chatThread(time.Now().UTC())
	neighbour, culprit := make(chan error, 1), make(chan error, 1)
	go func() {
		neighbour <- h.s.write(context.Background(), func(ctx context.Context) error { return h.s.insert(ctx, a, false) })
	}()
	h.waitQueued(t, 1)
	go func() {
		culprit <- h.s.write(context.Background(), func(ctx context.Context) error {
			_, err := h.s.wc.ExecContext(ctx, `INSERT OR ROLLBACK INTO threads (id, tool_name, created_at, updated_at,
				expires_at) VALUES (?, 'chat', 0, 0, 0)`, existing.ID)
			return err
		})
	}()
	h.waitQueued(t, 2)
	h.release(t)
	if err := <-neighbour; err != nil {
		t.Errorf("the write grouped with it: %v, want it committed", err)
	}
	if err := <-culprit; err == nil || !strings.Contains(err.Error(), "UNIQUE") {
		t.Errorf("the write that ended the transaction: %v, want its UNIQUE constraint failure", err)
	}
	if _, err := h.s.Get(context.Background(), a.ID, time.Now().UTC()); err != nil {
		t.Errorf("the other write's thread: %v", err)
	}
}

// A caller whose context ends while its write runs in a group does not
// interrupt the group's transaction (SQLite would roll all of it back):
// the write, already started, completes, and so do the others.
func TestACancelDuringAGroupedWriteInterruptsNothing(t *testing.T) {
	t.Parallel()
	h := holdWriter(t, 0)
	now := time.Now().UTC()
	a, b := chatThread(now), chatThread(now)
	ctxA, cancelA := context.WithCancel(context.Background())
	errA, errB := make(chan error, 1), make(chan error, 1)
	go func() {
		errA <- h.s.write(ctxA, func(ctx context.Context) error {
			cancelA() // the caller leaves while its statements run
			return h.s.insert(ctx, a, false)
		})
	}()
	go func() {
		errB <- h.s.write(context.Background(), func(ctx context.Context) error { return h.s.insert(ctx, b, false) })
	}()
	h.waitQueued(t, 2)
	h.release(t)
	if err := <-errA; err != nil {
		t.Errorf("the write whose caller left once it had started: %v, want it committed", err)
	}
	if err := <-errB; err != nil {
		t.Errorf("the write grouped with it: %v", err)
	}
	for _, th := range []*memory.Thread{a, b} {
		if _, err := h.s.Get(context.Background(), th.ID, now); err != nil {
			t.Errorf("thread %s: %v, want it committed", th.ID, err)
		}
	}
}
