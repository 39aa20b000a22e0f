package sqlitestore

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// readHead reads the thread and returns its head (without the turns) and
// its turn count.
func readHead(t *testing.T, s *Store, id string, now time.Time) (memory.Thread, int) {
	t.Helper()
	got, err := s.Get(context.Background(), id, now)
	if err != nil {
		t.Fatalf("read thread %s: %v", id, err)
	}
	n := len(got.Turns)
	got.Turns = nil
	return *got, n
}

// A continued call's read follows its previous call's append: it reads
// neither the thread's row nor its turns from the file.
func TestAReadAfterAnAppendReadsNoRow(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	th.InitialContext = map[string]any{"prompt": "p"}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	readHead(t, s, th.ID, now)
	before := s.rowReads.Load()
	later, expires := now.Add(time.Minute), now.Add(2*time.Hour)
	turns := []memory.Turn{{Role: memory.RoleUser, Content: "q"}, {Role: memory.RoleAssistant, Content: "a"}}
	for i := range 3 {
		if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x", After: 2 * i}, turns, 10, later,
			expires); err != nil {
			t.Fatal(err)
		}
		th.UpdatedAt, th.ExpiresAt = later, expires
		head, n := readHead(t, s, th.ID, now)
		if diff := cmp.Diff(*th, head); diff != "" {
			t.Errorf("head after append %d (-want +got):\n%s", i+1, diff)
		}
		if n != 2*(i+1) {
			t.Errorf("after append %d: %d turns, want %d", i+1, n, 2*(i+1))
		}
		later, expires = later.Add(time.Minute), expires.Add(time.Minute)
	}
	if n := s.rowReads.Load() - before; n != 0 {
		t.Errorf("reads after the appends read the thread's row %d times, want none", n)
	}
}

// An append refused, answered as a retry, or undone with its group leaves
// the row this process keeps as the file has it.
func TestAWriteNotCommittedLeavesTheKeptRowAlone(t *testing.T) {
	t.Parallel()
	s := open(t, filepath.Join(t.TempDir(), "memory.db"))
	ctx := context.Background()
	now := time.Now().UTC()
	th := chatThread(now)
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	turns := []memory.Turn{{Role: memory.RoleUser, Content: "q"}, {Role: memory.RoleAssistant, Content: "a"}}
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x"}, turns, 2, now, th.ExpiresAt); err != nil {
		t.Fatal(err)
	}
	check := func(what string) {
		t.Helper()
		// A write committed after it, so that what it left behind would show.
		if err := s.Create(ctx, chatThread(now)); err != nil {
			t.Fatal(err)
		}
		head, n := readHead(t, s, th.ID, now)
		if diff := cmp.Diff(*th, head); diff != "" || n != 2 {
			t.Errorf("after %s: %d turns, want 2; head (-want +got):\n%s", what, n, diff)
		}
	}
	check("the append")
	later := now.Add(time.Minute)
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x"}, turns, 2, later, later.Add(time.Hour)); err != nil {
		t.Fatalf("a retry: %v", err)
	}
	check("a retry")
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "y"}, turns, 2, later,
		later.Add(time.Hour)); !errors.Is(err, memory.ErrTurnLimit) {
		t.Fatalf("an append past the limit: %v, want ErrTurnLimit", err)
	}
	check("an append past the limit")

	errUndone := errors.New("undone after its statements")
	undone := func(ctx context.Context) error {
		if _, err := s.advance(ctx, th.ID, "", turns, 10, later, later.Add(time.Hour)); err != nil {
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
	turns := []memory.Turn{{Role: memory.RoleUser, Content: "q"}, {Role: memory.RoleAssistant, Content: "a"}}
	later := now.Add(time.Minute)
	errUndone := errors.New("undone after its statements")
	writes := []func(ctx context.Context) error{
		func(ctx context.Context) error {
			_, err := h.s.advance(ctx, kept.ID, "", turns, 10, later, later.Add(time.Hour))
			if err == nil {
				err = h.s.insertTurns(ctx, kept.ID, 0, "", turns)
			}
			return err
		},
		func(ctx context.Context) error {
			if _, err := h.s.advance(ctx, undone.ID, "", turns, 10, later, later.Add(time.Hour)); err != nil {
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
			head, n := readHead(t, h.s, want.th.ID, now)
			if diff := cmp.Diff(*want.th, head); diff != "" || n != want.turns {
				t.Errorf("%d turns, want %d; head (-want +got):\n%s", n, want.turns, diff)
			}
		}
	}
}
