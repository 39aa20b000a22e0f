package storetest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// base is the time the suite's threads are written at.
var base = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// newThread is a live thread of the given client, without turns.
func newThread(client string) *memory.Thread {
	return &memory.Thread{
		ID: uuid.NewString(), CreatedAt: base, UpdatedAt: base, ExpiresAt: base.Add(time.Hour),
		ToolName: "chat", ClientID: client,
	}
}

// exchange is a user turn and the assistant's answer.
func exchange(question, answer string) []memory.Turn {
	return []memory.Turn{
		{Role: memory.RoleUser, Content: question, Timestamp: base},
		{Role: memory.RoleAssistant, Content: answer, Timestamp: base},
	}
}

func contents(t *testing.T, s memory.Store, id string) []string {
	t.Helper()
	th, err := s.Get(context.Background(), id, base)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(th.Turns))
	for i, turn := range th.Turns {
		out[i] = turn.Content
	}
	return out
}

// runExchanges checks that an append carrying an exchange id the thread
// already holds is a retry: it stores nothing and still succeeds, so an edge
// that lost the first answer may send the same exchange again.
func runExchanges(t *testing.T, newStore func(t *testing.T) memory.Store) {
	ctx := context.Background()
	hour := base.Add(time.Hour)

	t.Run("a retried append is stored once", func(t *testing.T) {
		s := newStore(t)
		th := newThread("")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, exchange("q1", "a1"), 10, base,
				hour); err != nil || n != 2 {
				t.Fatalf("Append x-1 = %d, %v; want 2, nil", n, err)
			}
		}
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-2"}, exchange("q2", "a2"), 10, base,
			hour); err != nil || n != 4 {
			t.Fatalf("Append x-2 = %d, %v; want 4, nil", n, err)
		}
		// A late retry of the first exchange, after another was stored.
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, exchange("q1", "a1"), 10, base,
			hour); err != nil || n != 4 {
			t.Fatalf("late retry of x-1 = %d, %v; want 4, nil", n, err)
		}
		if diff := cmp.Diff([]string{"q1", "a1", "q2", "a2"}, contents(t, s, th.ID)); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
	})

	t.Run("a retry at the turn limit succeeds", func(t *testing.T) {
		s := newStore(t)
		th := newThread("")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, exchange("q", "a"), 2, base,
			hour); err != nil || n != 2 {
			t.Fatalf("Append = %d, %v; want 2, nil", n, err)
		}
		// The first attempt filled the thread; its retry is not a new
		// exchange over the limit but the same one, already kept.
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, exchange("q", "a"), 2, base,
			hour); err != nil || n != 2 {
			t.Errorf("retry at the limit = %d, %v; want 2, nil", n, err)
		}
		_, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-2"}, exchange("q", "a"), 2, base, hour)
		if !errors.Is(err, memory.ErrTurnLimit) {
			t.Errorf("a new exchange at the limit: err = %v, want ErrTurnLimit", err)
		}
	})

	t.Run("an append the limit refused leaves nothing behind, its exchange id included", func(t *testing.T) {
		s := newStore(t)
		// One thread empty, one holding an exchange: a refusal must leave
		// each as it was, whether or not it held turns before.
		empty, held := newThread(""), newThread("")
		for _, th := range []*memory.Thread{empty, held} {
			if err := s.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Append(ctx, held.ID, "", memory.Exchange{ID: "x-1"}, exchange("q1", "a1"), 10, base,
			hour); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			th    *memory.Thread
			limit int
			want  []string
		}{{empty, 1, []string{}}, {held, 3, []string{"q1", "a1"}}} {
			before, err := s.Get(ctx, c.th.ID, base)
			if err != nil {
				t.Fatal(err)
			}
			// Later than the appends before it, so that a refusal which
			// moved the thread's times would show. The count it answers is
			// what the caller reports as the thread's turns.
			later := base.Add(time.Minute)
			n, err := s.Append(ctx, c.th.ID, "", memory.Exchange{ID: "x-2"}, exchange("q2", "a2"), c.limit, later,
				later.Add(time.Hour))
			if !errors.Is(err, memory.ErrTurnLimit) || n != len(c.want) {
				t.Fatalf("over the limit of %d = %d, %v; want %d, ErrTurnLimit", c.limit, n, err, len(c.want))
			}
			after, err := s.Get(ctx, c.th.ID, base)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(before, after, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("the thread after a refusal at %d (-before +after):\n%s", c.limit, diff)
			}
			if len(c.want) > 0 {
				// The exchanges stored before it are still known.
				if n, err := s.Append(ctx, c.th.ID, "", memory.Exchange{ID: "x-1"}, exchange("q1", "a1"), 10, base,
					hour); err != nil || n != len(c.want) {
					t.Errorf("a retry of x-1 after the refusal = %d, %v; want %d, nil", n, err, len(c.want))
				}
			}
			// Refused, the exchange was not kept: once the limit allows it,
			// it is a new exchange, not a retry of one.
			n, err = s.Append(ctx, c.th.ID, "", memory.Exchange{ID: "x-2"}, exchange("q2", "a2"), 10, base, hour)
			if want := len(c.want) + 2; err != nil || n != want {
				t.Errorf("the refused exchange again under a higher limit = %d, %v; want %d, nil", n, err, want)
			}
			if diff := cmp.Diff(append(c.want, "q2", "a2"), contents(t, s, c.th.ID)); diff != "" {
				t.Errorf("after the exchange was let in (-want +got):\n%s", diff)
			}
		}
	})

	t.Run("exchange ids are per thread, and an empty one is never a retry", func(t *testing.T) {
		s := newStore(t)
		a, b := newThread(""), newThread("")
		for _, th := range []*memory.Thread{a, b} {
			if err := s.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "same"}, exchange("q", "a"), 10, base,
				hour); err != nil {
				t.Fatal(err)
			}
		}
		for range 2 {
			if _, err := s.Append(ctx, a.ID, "", memory.Exchange{}, exchange("no id", "kept"), 10, base,
				hour); err != nil {
				t.Fatal(err)
			}
		}
		if diff := cmp.Diff([]string{"q", "a", "no id", "kept", "no id", "kept"}, contents(t, s, a.ID)); diff != "" {
			t.Errorf("thread a (-want +got):\n%s", diff)
		}
		if diff := cmp.Diff([]string{"q", "a"}, contents(t, s, b.ID)); diff != "" {
			t.Errorf("thread b (-want +got):\n%s", diff)
		}
	})

	t.Run("concurrent retries store the exchange once", func(t *testing.T) {
		s := newStore(t)
		th := newThread("")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 20)
		for range 20 {
			wg.Go(func() {
				if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, exchange("q", "a"), 10, base,
					hour); err != nil {
					errs <- err
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if diff := cmp.Diff([]string{"q", "a"}, contents(t, s, th.ID)); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
	})

	t.Run("a retry is answered only to the thread's client, while it lives", func(t *testing.T) {
		s := newStore(t)
		th := newThread("alice")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		// Full, so that even the path that tells a retry from the turn
		// limit is taken.
		if _, err := s.Append(ctx, th.ID, "alice", memory.Exchange{ID: "x-1"}, exchange("q", "a"), 2, base,
			hour); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{2, 10} {
			_, err := s.Append(ctx, th.ID, "bob", memory.Exchange{ID: "x-1"}, exchange("q", "a"), limit, base, hour)
			if !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("another client's retry (limit %d): err = %v, want ErrNotFound", limit, err)
			}
			_, err = s.Append(ctx, th.ID, "alice", memory.Exchange{ID: "x-1"}, exchange("q", "a"), limit, hour,
				hour.Add(time.Hour))
			if !errors.Is(err, memory.ErrNotFound) {
				t.Errorf("a retry once the thread expired (limit %d): err = %v, want ErrNotFound", limit, err)
			}
		}
		if diff := cmp.Diff([]string{"q", "a"}, contents(t, s, th.ID)); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
	})

	t.Run("appends of one turn and of three read in order", func(t *testing.T) {
		s := newStore(t)
		th := newThread("")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		one := []memory.Turn{{Role: memory.RoleUser, Content: "q1", Timestamp: base}}
		three := append(exchange("q2", "a2"), memory.Turn{Role: memory.RoleUser, Content: "q3", Timestamp: base})
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, one, 10, base, hour); err != nil || n != 1 {
			t.Fatalf("Append one = %d, %v; want 1, nil", n, err)
		}
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-2"}, three, 10, base, hour); err != nil || n != 4 {
			t.Fatalf("Append three = %d, %v; want 4, nil", n, err)
		}
		if diff := cmp.Diff([]string{"q1", "q2", "a2", "q3"}, contents(t, s, th.ID)); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
	})

	t.Run("a retry is found after the exchanges stored since its call was prepared", func(t *testing.T) {
		s := newStore(t)
		th := newThread("")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-0"}, exchange("q0", "a0"), 10, base,
			hour); err != nil {
			t.Fatal(err)
		}
		// Two calls prepared at 2 turns; a third after them.
		for _, ex := range []memory.Exchange{{ID: "x-1", After: 2}, {ID: "x-2", After: 2}, {ID: "x-3", After: 6}} {
			if _, err := s.Append(ctx, th.ID, "", ex, exchange("q", "a"), 10, base, hour); err != nil {
				t.Fatal(err)
			}
		}
		for _, ex := range []memory.Exchange{{ID: "x-1", After: 2}, {ID: "x-2", After: 2}, {ID: "x-3", After: 6}} {
			if n, err := s.Append(ctx, th.ID, "", ex, exchange("again", "again"), 10, base,
				hour); err != nil || n != 8 {
				t.Errorf("retry of %s = %d, %v; want 8, nil", ex.ID, n, err)
			}
		}
		// Full: a retry is told from a new exchange by the same search.
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-2", After: 2}, exchange("again", "again"), 8,
			base, hour); err != nil || n != 8 {
			t.Errorf("retry of x-2 at the limit = %d, %v; want 8, nil", n, err)
		}
		want := []string{"q0", "a0", "q", "a", "q", "a", "q", "a"} // no "again"
		if diff := cmp.Diff(want, contents(t, s, th.ID)); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
	})
}

// runUnchanged checks a workflow's step that is to follow the state its
// call saw (Exchange.Unchanged): refused whole once another state of the
// same tool came first, stored when none did (other exchanges do not
// count), and a retry of itself still a retry.
func runUnchanged(t *testing.T, newStore func(t *testing.T) memory.Store) {
	ctx := context.Background()
	hour := base.Add(time.Hour)
	t.Run("a step is refused once another state of its tool came first", func(t *testing.T) {
		s := newStore(t)
		th := newThread("")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		step := func(tool, id string, after int) (int, error) {
			turns := exchange("step "+id, "answer "+id)
			for i := range turns {
				turns[i].ToolName = tool
			}
			turns[1].WorkflowState = map[string]any{"step": id}
			return s.Append(ctx, th.ID, "", memory.Exchange{ID: id, After: after, StateOf: tool, Unchanged: true},
				turns, 10, base, hour)
		}
		if n, err := step("debug", "s1", 0); err != nil || n != 2 {
			t.Fatalf("the first step = %d, %v; want 2, nil", n, err)
		}
		// Two steps prepared on the thread of two turns: the second to
		// be stored finds the first's state after them.
		if n, err := step("debug", "s2a", 2); err != nil || n != 4 {
			t.Fatalf("the first of two steps = %d, %v; want 4, nil", n, err)
		}
		if _, err := step("debug", "s2b", 2); !errors.Is(err, memory.ErrMoved) {
			t.Errorf("the second of two steps: err = %v, want ErrMoved", err)
		}
		if n, err := step("debug", "s2a", 2); err != nil || n != 4 {
			t.Errorf("a retry of the step stored = %d, %v; want 4, nil", n, err)
		}
		// A chat's exchange, and another tool's step, stored meanwhile
		// leave the step's state as it saw it.
		if n, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "c", After: 4}, exchange("q", "a"), 10, base,
			hour); err != nil || n != 6 {
			t.Errorf("a chat's exchange = %d, %v; want 6, nil", n, err)
		}
		if n, err := step("planner", "p1", 4); err != nil || n != 8 {
			t.Errorf("another tool's step = %d, %v; want 8, nil", n, err)
		}
		if n, err := step("debug", "s3", 4); err != nil || n != 10 {
			t.Errorf("a step after other tools' exchanges = %d, %v; want 10, nil", n, err)
		}
		// At the limit, the limit is what refuses it: sent again, it would
		// be refused again.
		if _, err := step("debug", "s4", 4); !errors.Is(err, memory.ErrTurnLimit) {
			t.Errorf("a step overtaken at the turn limit: err = %v, want ErrTurnLimit", err)
		}
		want := []string{"step s1", "answer s1", "step s2a", "answer s2a", "q", "a", "step p1", "answer p1",
			"step s3", "answer s3"}
		if diff := cmp.Diff(want, contents(t, s, th.ID)); diff != "" {
			t.Errorf("turns (-want +got):\n%s", diff)
		}
	})
	// A thread written whole (created with its turns, or imported) holds
	// states as an appended one does: a step prepared before the last of
	// them is refused, one prepared after it is stored.
	for _, how := range []string{"created", "imported"} {
		t.Run("a state the thread was "+how+" with counts", func(t *testing.T) {
			s := newStore(t)
			th := newThread("")
			th.Turns = append(exchange("chat", "chatted"), exchange("step 1", "answer 1")...)
			th.Turns[2].ToolName, th.Turns[3].ToolName = "debug", "debug"
			th.Turns[3].WorkflowState = map[string]any{"step": 1}
			var err error
			if how == "created" {
				err = s.Create(ctx, th)
			} else {
				err = s.Import(ctx, []*memory.Thread{th}, false, base)
			}
			if err != nil {
				t.Fatal(err)
			}
			step := func(id string, after int) (int, error) {
				turns := exchange("step "+id, "answer "+id)
				turns[0].ToolName, turns[1].ToolName = "debug", "debug"
				turns[1].WorkflowState = map[string]any{"step": id}
				return s.Append(ctx, th.ID, "", memory.Exchange{ID: id, After: after, StateOf: "debug",
					Unchanged: true}, turns, 10, base, hour)
			}
			if _, err := step("before", 2); !errors.Is(err, memory.ErrMoved) {
				t.Errorf("a step prepared before the thread's last state: err = %v, want ErrMoved", err)
			}
			if n, err := step("after", 4); err != nil || n != 6 {
				t.Errorf("a step prepared after it = %d, %v; want 6, nil", n, err)
			}
		})
	}
}
