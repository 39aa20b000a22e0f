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
		if _, err := s.Append(ctx, id, "", memory.Exchange{}, turns, 100, later, later.Add(time.Hour)); err != nil {
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

	t.Run("a thread read within a weight, as a call reads it, has its initial context as it is now",
		func(t *testing.T) {
			r, w := newPair(t)
			th := newThread("")
			th.Turns, th.InitialContext = exchange("q1", "a1"), map[string]any{"prompt": "first"}
			if err := w.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
			within := func(want string) {
				t.Helper()
				got, _, err := r.GetWithin(ctx, th.ID, later, 1<<20)
				if err != nil || got.InitialContext["prompt"] != want {
					t.Fatalf("read within 1 MiB: %+v, %v; want the initial context's prompt %q", got, err, want)
				}
			}
			within("first")
			appendTo(t, w, th.ID, exchange("q2", "a2"))
			within("first")
			again := *th
			again.InitialContext = map[string]any{"prompt": "replaced"}
			if err := w.Import(ctx, []*memory.Thread{&again}, true, base); err != nil {
				t.Fatal(err)
			}
			within("replaced")
		})

	t.Run("a thread replaced by an import reads as replaced", func(t *testing.T) {
		r, w := newPair(t)
		th := create(t, w, exchange("old q", "old a"))
		want(t, r, th.ID, "old q", "old a")
		same := *th
		same.Turns = exchange("new q", "new a") // as many turns as before
		if err := w.Import(ctx, []*memory.Thread{&same}, true, base); err != nil {
			t.Fatal(err)
		}
		want(t, r, th.ID, "new q", "new a")
		shorter := *th
		shorter.Turns = exchange("short", "er")[:1]
		if err := w.Import(ctx, []*memory.Thread{&shorter}, true, base); err != nil {
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

	t.Run("appends through either handle read in order through both", func(t *testing.T) {
		r, w := newPair(t)
		th := create(t, w, exchange("q1", "a1"))
		want(t, r, th.ID, "q1", "a1")
		want(t, w, th.ID, "q1", "a1")
		appendTo(t, r, th.ID, exchange("q2", "a2"))
		appendTo(t, w, th.ID, exchange("q3", "a3"))
		want(t, r, th.ID, "q1", "a1", "q2", "a2", "q3", "a3")
		appendTo(t, r, th.ID, exchange("q4", "a4"))
		want(t, w, th.ID, "q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4")
		want(t, r, th.ID, "q1", "a1", "q2", "a2", "q3", "a3", "q4", "a4")
	})

	t.Run("a thread replaced through one handle and appended to through the other reads as replaced",
		func(t *testing.T) {
			r, w := newPair(t)
			th := create(t, w, exchange("old q", "old a"))
			want(t, r, th.ID, "old q", "old a")
			same := *th
			same.Turns = exchange("new q", "new a") // as many turns as before
			if err := w.Import(ctx, []*memory.Thread{&same}, true, base); err != nil {
				t.Fatal(err)
			}
			appendTo(t, r, th.ID, exchange("q2", "a2"))
			want(t, r, th.ID, "new q", "new a", "q2", "a2")
			want(t, w, th.ID, "new q", "new a", "q2", "a2")
		})

	t.Run("turns an append added read as stored through either handle", func(t *testing.T) {
		r, w := newPair(t)
		th := create(t, w, exchange("q", "a"))
		want(t, w, th.ID, "q", "a")
		// Values a store's encoding normalises: an empty list, an integer
		// among the metadata, a time in another zone.
		added := []memory.Turn{{Role: memory.RoleAssistant, Content: "a2", Files: []memory.FileRef{},
			Timestamp: base.In(time.FixedZone("UTC+1", 3600)), ModelMetadata: map[string]any{"tokens": 7}}}
		appendTo(t, w, th.ID, added)
		added[0].Content = "changed by the caller afterwards"
		read := func(s memory.Store) []memory.Turn {
			t.Helper()
			got, err := s.Get(ctx, th.ID, base)
			if err != nil {
				t.Fatal(err)
			}
			return got.Turns
		}
		fromWriter, fromReader := read(w), read(r)
		if diff := cmp.Diff(fromReader, fromWriter); diff != "" {
			t.Errorf("turns through the handle that appended them (-other handle +appender):\n%s", diff)
		}
		if got := fromWriter[2].Content; got != "a2" {
			t.Errorf("appended turn reads %q, want %q", got, "a2")
		}
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

	runHeads(t, newPair)
	runVersions(t, newPair)
}
