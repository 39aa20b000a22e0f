package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// Head reads the thread at now and returns its head (the thread without
// its turns) and how many turns it has, checking that the store's Head
// answers the same without reading them.
func Head(t *testing.T, s memory.Store, id string, now time.Time) (memory.Thread, int) {
	t.Helper()
	got, err := s.Get(context.Background(), id, now)
	if err != nil {
		t.Fatalf("read thread %s: %v", id, err)
	}
	n := len(got.Turns)
	got.Turns = nil
	head, count, err := s.Head(context.Background(), id, now)
	if err != nil {
		t.Fatalf("head of thread %s: %v", id, err)
	}
	if diff := cmp.Diff(got, head); diff != "" || count != n {
		t.Errorf("Head of thread %s = %d turns, want %d; (-Get +Head):\n%s", id, count, n, diff)
	}
	return *got, n
}

// runHeads checks that a thread's head (its times, initial context, parent)
// reads as the last write left it, whichever handle wrote it: stores may
// keep the rows they read (sqlitestore).
func runHeads(t *testing.T, newPair func(t *testing.T) (reader, writer memory.Store)) {
	ctx := context.Background()
	want := func(t *testing.T, s memory.Store, now time.Time, th *memory.Thread, turns int) {
		t.Helper()
		wantHead := *th
		wantHead.Turns = nil
		for range 2 { // the second read may be answered from what the first kept
			got, n := Head(t, s, th.ID, now)
			if diff := cmp.Diff(wantHead, got); diff != "" {
				t.Errorf("thread's head (-want +got):\n%s", diff)
			}
			if n != turns {
				t.Errorf("thread has %d turns, want %d", n, turns)
			}
		}
	}
	appendAt := func(t *testing.T, s memory.Store, th *memory.Thread, at, expires time.Time) {
		t.Helper()
		_, err := s.Append(ctx, th.ID, "", memory.Exchange{}, exchange("q", "a"), 100, at, expires)
		if err != nil {
			t.Fatal(err)
		}
		th.UpdatedAt, th.ExpiresAt = at, expires
	}

	t.Run("a thread's head reads as the last write left it, through either handle", func(t *testing.T) {
		r, w := newPair(t)
		th := newThread("")
		th.InitialContext = map[string]any{"prompt": "first"}
		if err := w.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		want(t, r, base, th, 0)

		appendAt(t, w, th, base.Add(time.Minute), base.Add(2*time.Hour))
		want(t, r, base, th, 2)
		appendAt(t, r, th, base.Add(2*time.Minute), base.Add(3*time.Hour))
		want(t, r, base, th, 4)
		want(t, w, base, th, 4)

		replaced := *th
		replaced.ParentID, replaced.UpdatedAt = "a parent", base.Add(3*time.Minute)
		replaced.InitialContext = map[string]any{"prompt": "second"}
		replaced.Turns = append(exchange("q", "a"), exchange("q", "a")...) // as many turns as before
		if err := w.Import(ctx, []*memory.Thread{&replaced}, true, base); err != nil {
			t.Fatal(err)
		}
		want(t, r, base, &replaced, 4)

		if err := w.Delete(ctx, th.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Get(ctx, th.ID, base); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("a deleted thread reads with %v, want ErrNotFound", err)
		}
	})

	t.Run("a write through the other handle is seen whichever thread is read first", func(t *testing.T) {
		r, w := newPair(t)
		changed, other := newThread(""), newThread("")
		for _, th := range []*memory.Thread{changed, other} {
			if err := w.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
			want(t, r, base, th, 0)
		}
		appendAt(t, w, changed, base.Add(time.Minute), base.Add(2*time.Hour))
		want(t, r, base, other, 0)
		want(t, r, base, changed, 2)
	})

	t.Run("a thread read before it expired does not read once it has", func(t *testing.T) {
		r, w := newPair(t)
		th := newThread("")
		if err := w.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		want(t, r, base, th, 0)
		if _, err := r.Get(ctx, th.ID, th.ExpiresAt); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("an expired thread reads with %v, want ErrNotFound", err)
		}
	})
}

// runHead checks that Head answers a thread's head and turn count as Get
// would, without its turns, and nothing for an expired or unknown thread.
func runHead(t *testing.T, newStore func(t *testing.T) memory.Store) {
	ctx := context.Background()
	t.Run("head is the thread without its turns", func(t *testing.T) {
		s := newStore(t)
		th := newThread("alice")
		th.ParentID, th.InitialContext, th.Weight = "p-1", map[string]any{"prompt": "first"}, 500
		th.Turns = exchange("q1", "a1")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		later := base.Add(time.Minute)
		if _, err := s.Append(ctx, th.ID, "alice", memory.Exchange{ID: "x-1", Weight: 20}, exchange("q2", "a2"), 10,
			later, later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		head, n := Head(t, s, th.ID, later)
		want := memory.Thread{ID: th.ID, ParentID: "p-1", CreatedAt: base, UpdatedAt: later,
			ExpiresAt: later.Add(time.Hour), ToolName: "chat", InitialContext: map[string]any{"prompt": "first"},
			ClientID: "alice", Weight: 520}
		if diff := cmp.Diff(want, head); diff != "" || n != 4 {
			t.Errorf("head with %d turns, want 4 (-want +got):\n%s", n, diff)
		}
		if _, _, err := s.Head(ctx, th.ID, later.Add(2*time.Hour)); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("the head of an expired thread: %v, want ErrNotFound", err)
		}
		if _, _, err := s.Head(ctx, newThread("").ID, later); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("the head of an unknown thread: %v, want ErrNotFound", err)
		}
	})
	t.Run("a thread within a weight is read whole, a heavier one by its head", func(t *testing.T) {
		s := newStore(t)
		th := newThread("alice")
		th.InitialContext, th.Weight = map[string]any{"prompt": "first"}, 500
		th.Turns = exchange("q1", "a1")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		whole, err := s.Get(ctx, th.ID, base)
		if err != nil {
			t.Fatal(err)
		}
		for _, max := range []int64{500, 499, 500} { // the first and last with the turns cached
			got, heavier, err := s.GetWithin(ctx, th.ID, base, max)
			want := whole
			if max < th.Weight {
				head, _ := Head(t, s, th.ID, base)
				want = &head
			}
			if err != nil || heavier != (max < th.Weight) {
				t.Errorf("within %d: heavier %v, %v; want %v", max, heavier, err, max < th.Weight)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("within %d (-want +got):\n%s", max, diff)
			}
		}
		if _, _, err := s.GetWithin(ctx, th.ID, base.Add(2*time.Hour), 1000); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("an expired thread within a weight: %v, want ErrNotFound", err)
		}
		if _, _, err := s.GetWithin(ctx, newThread("").ID, base, 1000); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("an unknown thread within a weight: %v, want ErrNotFound", err)
		}
	})
}
