package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/storetest"
)

// A continued call's read follows its previous call's append: it reads
// no row from the file, and answers the head the file holds, to the
// representation of its times.
func TestAReadAfterAnAppendReadsNoRow(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, fromFile := open(t, path), open(t, path)
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	th.InitialContext = map[string]any{"prompt": "p"}
	create(t, s, th)
	storetest.Head(t, s, th.ID, now)
	before := s.rowReads.Load()
	// Times as a caller may give them: in another zone, with a monotonic reading.
	later := time.Now().In(time.FixedZone("UTC+1", 3600)).Add(time.Minute)
	exactly := cmp.Comparer(func(a, b time.Time) bool { return a == b })
	for i := range 3 {
		if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x", After: 2 * i}, qa(), 10, later,
			later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		head, n := storetest.Head(t, s, th.ID, now)
		want, wantN := storetest.Head(t, fromFile, th.ID, now)
		if diff := cmp.Diff(want, head, exactly); diff != "" {
			t.Errorf("head after append %d (-in the file +read):\n%s", i+1, diff)
		}
		if n != wantN {
			t.Errorf("after append %d: %d turns, the file holds %d", i+1, n, wantN)
		}
		later = later.Add(time.Minute)
	}
	if n := s.rowReads.Load() - before; n != 0 {
		t.Errorf("reads after the appends read the thread's row %d times, want none", n)
	}
}

// A sweep that deletes a thread drops its kept row, which a read whose
// clock was set back would otherwise find live.
func TestASweptThreadIsNotReadFromItsKeptRow(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	swept := create(t, s, chatThread(now))
	storetest.Head(t, s, swept.ID, now)
	create(t, s, chatThread(swept.ExpiresAt.Add(2*sweepEvery))) // sweeps
	if _, err := s.Get(ctx, swept.ID, now); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("a swept thread read at an earlier time: %v, want ErrNotFound", err)
	}
}

// An append refused, answered as a retry, or undone in its own
// transaction leaves the row this process keeps as the file has it, and
// nothing of it is applied by the next write that commits.
func TestAWriteNotCommittedLeavesTheKeptRowAlone(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	th := create(t, s, chatThread(now))
	storetest.Head(t, s, th.ID, now) // kept from here on
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x"}, qa(), 4, now, th.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		create(t, s, chatThread(now)) // a write committed after it, so that what it left behind would show
		head, n := storetest.Head(t, s, th.ID, now)
		if diff := cmp.Diff(*th, head); diff != "" || n != 2 {
			t.Errorf("after %s: %d turns, want 2; head (-want +got):\n%s", what, n, diff)
		}
	}
	check("the append")
	later := now.Add(time.Minute)
	// Room for it: the row moves, then the turns show it a retry, and it is rolled back.
	_, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x"}, qa(), 4, later, later.Add(time.Hour))
	if err != nil {
		t.Fatalf("a retry: %v", err)
	}
	check("a retry")
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "y"}, append(qa(), qa()...), 4, later,
		later.Add(time.Hour)); !errors.Is(err, memory.ErrTurnLimit) {
		t.Fatalf("an append past the limit: %v, want ErrTurnLimit", err)
	}
	check("an append past the limit")

	errUndone := errors.New("undone after its statements")
	undone := func(ctx context.Context) error {
		if _, err := s.advance(ctx, th.ID, "", 0, qa(), 10, later, later.Add(time.Hour)); err != nil {
			return err
		}
		return errUndone
	}
	if err := s.write(ctx, undone); !errors.Is(err, errUndone) {
		t.Fatalf("a write undone alone: %v", err)
	}
	check("a write undone alone")
}

// In a group, a write rolled back to its savepoint leaves the row as the
// group's commit left it, and the writes kept move it on.
func TestAWriteUndoneInAGroupLeavesTheKeptRowAlone(t *testing.T) {
	t.Parallel()
	h := holdWriter(t, 2)
	kept, undone := h.threads[0], h.threads[1]
	now := time.Now().UTC()
	turns := qa()
	later := now.Add(time.Minute)
	errUndone := errors.New("undone after its statements")
	writes := []func(ctx context.Context) error{
		func(ctx context.Context) error {
			_, err := h.s.advance(ctx, kept.ID, "", 0, turns, 10, later, later.Add(time.Hour))
			if err == nil {
				err = h.s.insertTurns(ctx, kept.ID, 0, "", turns)
			}
			return err
		},
		func(ctx context.Context) error {
			_, err := h.s.advance(ctx, undone.ID, "", 0, turns, 10, later, later.Add(time.Hour))
			if err != nil {
				return err
			}
			return errUndone
		},
	}
	errs := make(chan error, len(writes))
	for _, fn := range writes {
		go func() { errs <- h.s.write(context.Background(), fn) }()
	}
	h.waitQueued(t, len(writes))
	h.release(t)
	var failed int
	for range writes {
		if err := <-errs; errors.Is(err, errUndone) {
			failed++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if failed != 1 {
		t.Fatalf("%d writes failed, want the one undone", failed)
	}
	kept.UpdatedAt, kept.ExpiresAt = later, later.Add(time.Hour)
	for _, want := range []struct {
		th    *memory.Thread
		turns int
	}{{kept, 2}, {undone, 0}} {
		for range 2 {
			head, n := storetest.Head(t, h.s, want.th.ID, now)
			if diff := cmp.Diff(*want.th, head); diff != "" || n != want.turns {
				t.Errorf("%d turns, want %d; head (-want +got):\n%s", n, want.turns, diff)
			}
		}
	}
}

// The rows kept hold no more than their bound, however a thread's head is
// made: an initial context whose JSON decodes to many times its text, or
// names of a megabyte. Not parallel: it measures the heap.
func TestTheRowsKeptHoldNoMoreThanTheirBound(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	empties := make([]any, 150_000) // 450 KB of JSON, about 10 MB decoded
	for i := range empties {
		empties[i] = map[string]any{}
	}
	big := strings.Repeat("n", 1<<20)
	var threads []*memory.Thread
	for i := range 40 {
		th := chatThread(now)
		if i < 8 {
			th.InitialContext = map[string]any{"x": empties}
		} else {
			th.ToolName, th.ParentID = big, big
		}
		threads = append(threads, th)
	}
	if err := s.Import(ctx, threads, false, now); err != nil {
		t.Fatal(err)
	}
	ids := make([]string, len(threads))
	for i, th := range threads {
		ids[i] = th.ID
	}
	empties, threads = nil, nil
	before := storetest.HeapBytes()
	for _, read := range [][]string{ids[:8], ids[8:]} { // each kind alone, then the second in place of the first
		for _, id := range read {
			if _, err := s.Get(ctx, id, now); err != nil {
				t.Fatal(err)
			}
		}
		if grew := storetest.HeapBytes() - before; grew > 2*memory.DefaultHeadBytes {
			t.Errorf("the rows kept hold %d MB, over twice their bound of %d MB", grew>>20,
				memory.DefaultHeadBytes>>20)
		}
	}
	runtime.KeepAlive(s)
}

// A thread whose row counts turns the file lacks fails its reads at once
// with what is wrong, not as a store to try again.
func TestADamagedThreadIsSaidToBe(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	s := open(t, path)
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	th.Turns = append(qa(), qa()...)
	create(t, s, th)
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.ExecContext(ctx, `DELETE FROM turns WHERE thread_id = ? AND seq = 2`, th.ID); err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(ctx, th.ID, now)
	if err == nil || errors.Is(err, memory.ErrUnavailable) || !strings.Contains(err.Error(), th.ID) ||
		!strings.Contains(err.Error(), "damaged") {
		t.Errorf("a read of a damaged thread: %v, want an error that names it damaged", err)
	}
}
