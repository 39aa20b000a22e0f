package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// runReads checks that a thread read again reads as it is now, whatever
// was read before: stores may keep what they decoded (memory.TurnCache).
func runReads(t *testing.T, newStore func(t *testing.T) memory.Store) {
	RunShared(t, func(t *testing.T) (memory.Store, memory.Store) {
		s := newStore(t)
		return s, s
	})
}

// RunShared checks reads through one handle of a store after writes
// through another, as between two processes sharing one SQLite file or one
// Redis: newPair returns the two handles (the same one for a store only a
// process can reach).
func RunShared(t *testing.T, newPair func(t *testing.T) (reader, writer memory.Store)) {
	ctx := context.Background()
	later := base.Add(time.Minute)
	appendTo := func(t *testing.T, s memory.Store, id string, turns []memory.Turn) {
		t.Helper()
		if _, err := s.Append(ctx, id, "", "", turns, 100, later, later.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	create := func(t *testing.T, s memory.Store, turns []memory.Turn) *memory.Thread {
		t.Helper()
		th := newThread("")
		th.Turns = turns
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		return th
	}
	want := func(t *testing.T, s memory.Store, id string, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, contents(t, s, id)); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
	}

	t.Run("a read after appends sees every turn in order", func(t *testing.T) {
		r, w := newPair(t)
		th := create(t, w, exchange("q1", "a1"))
		want(t, r, th.ID, "q1", "a1")
		appendTo(t, w, th.ID, exchange("q2", "a2"))
		want(t, r, th.ID, "q1", "a1", "q2", "a2")
		want(t, r, th.ID, "q1", "a1", "q2", "a2")
		appendTo(t, w, th.ID, exchange("q3", "a3"))
		appendTo(t, w, th.ID, exchange("q4", "a4"))
		want(t, r, th.ID, "q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4")
	})

	t.Run("a thread replaced by an import reads as replaced", func(t *testing.T) {
		r, w := newPair(t)
		th := create(t, w, exchange("old q", "old a"))
		want(t, r, th.ID, "old q", "old a")
		same := *th
		same.Turns = exchange("new q", "new a") // as many turns as before
		if err := w.Import(ctx, []*memory.Thread{&same}, true); err != nil {
			t.Fatal(err)
		}
		want(t, r, th.ID, "new q", "new a")
		shorter := *th
		shorter.Turns = exchange("short", "er")[:1]
		if err := w.Import(ctx, []*memory.Thread{&shorter}, true); err != nil {
			t.Fatal(err)
		}
		want(t, r, th.ID, "short")
		appendTo(t, w, th.ID, exchange("then", "more"))
		want(t, r, th.ID, "short", "then", "more")
	})

	t.Run("a thread deleted and created again reads as created", func(t *testing.T) {
		r, w := newPair(t)
		th := create(t, w, exchange("first life", "a"))
		want(t, r, th.ID, "first life", "a")
		if err := w.Delete(ctx, th.ID); err != nil {
			t.Fatal(err)
		}
		again := *th
		again.Turns = exchange("second life", "b")
		if err := w.Create(ctx, &again); err != nil {
			t.Fatal(err)
		}
		want(t, r, th.ID, "second life", "b")
	})

	t.Run("a caller cannot change turns read again", func(t *testing.T) {
		r, w := newPair(t)
		th := create(t, w, exchange("q", "a"))
		for range 3 {
			got, err := r.Get(ctx, th.ID, base)
			if err != nil {
				t.Fatal(err)
			}
			got.Turns[0].Content = "changed"
			got.Turns = append(got.Turns[:1], memory.Turn{Content: "appended by a caller"})
		}
		want(t, r, th.ID, "q", "a")
	})
}
