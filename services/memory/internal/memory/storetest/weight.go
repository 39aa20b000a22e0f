package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// runWeight checks that a store keeps each thread within
// memory.MaxThreadWeight: what its creation or import weighed, and each
// append's Exchange.Weight, add up, and an append past the bound stores
// nothing.
func runWeight(t *testing.T, newStore func(t *testing.T) memory.Store) {
	ctx := context.Background()
	hour := base.Add(time.Hour)
	heavy := func(id string, weight int64) memory.Exchange { return memory.Exchange{ID: id, Weight: weight} }

	t.Run("an append past the thread's weight stores nothing", func(t *testing.T) {
		s := newStore(t)
		th := newThread("alice")
		th.Weight = memory.MaxThreadWeight / 2
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		if n, err := s.Append(ctx, th.ID, "alice", heavy("x-1", memory.MaxThreadWeight/4), exchange("q1", "a1"), 10,
			base, hour); err != nil || n != 2 {
			t.Fatalf("an append within the weight = %d, %v; want 2, nil", n, err)
		}
		n, err := s.Append(ctx, th.ID, "alice", heavy("x-2", memory.MaxThreadWeight/4+1), exchange("q2", "a2"), 10,
			base, hour)
		if !errors.Is(err, memory.ErrThreadFull) || n != 2 {
			t.Errorf("an append one past the weight = %d, %v; want 2, ErrThreadFull", n, err)
		}
		if diff := cmp.Diff([]string{"q1", "a1"}, contents(t, s, th.ID)); diff != "" {
			t.Errorf("turns after the refused append (-want +got):\n%s", diff)
		}
		// The first exchange's retry is answered: it is stored already.
		if n, err := s.Append(ctx, th.ID, "alice", heavy("x-1", memory.MaxThreadWeight/4), exchange("q1", "a1"), 10,
			base, hour); err != nil || n != 2 {
			t.Errorf("a retry of a stored exchange = %d, %v; want 2, nil", n, err)
		}
		// What is left still takes a lighter exchange, to the last unit.
		if n, err := s.Append(ctx, th.ID, "alice", heavy("x-3", memory.MaxThreadWeight/4), exchange("q3", "a3"), 10,
			base, hour); err != nil || n != 4 {
			t.Errorf("an append to the weight = %d, %v; want 4, nil", n, err)
		}
		if _, err := s.Append(ctx, th.ID, "alice", heavy("x-4", 1), exchange("q4", "a4"), 10, base,
			hour); !errors.Is(err, memory.ErrThreadFull) {
			t.Errorf("an append to a thread at its weight: %v, want ErrThreadFull", err)
		}
		if head, _, err := s.Head(ctx, th.ID, base); err != nil || head.Weight != memory.MaxThreadWeight ||
			head.ClientID != "alice" {
			t.Errorf("Head = %+v, %v; want alice's thread weighing %d", head, err, memory.MaxThreadWeight)
		}
		if got, err := s.Get(ctx, th.ID, base); err != nil || got.Weight != memory.MaxThreadWeight {
			t.Errorf("Get's thread weighs %v (%v), want %d", got, err, memory.MaxThreadWeight)
		}
		if _, _, err := s.Head(ctx, th.ID, hour); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Head of an expired thread: %v, want ErrNotFound", err)
		}
		if _, _, err := s.Head(ctx, newThread("alice").ID, base); !errors.Is(err, memory.ErrNotFound) {
			t.Errorf("Head of an unknown thread: %v, want ErrNotFound", err)
		}
	})

	t.Run("an imported thread's weight counts", func(t *testing.T) {
		s := newStore(t)
		th := newThread("alice")
		th.Weight = memory.MaxThreadWeight - 10
		if err := s.Import(ctx, []*memory.Thread{th}, false, base); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, th.ID, "alice", heavy("x-1", 11), exchange("q", "a"), 10, base,
			hour); !errors.Is(err, memory.ErrThreadFull) {
			t.Errorf("an append past an imported thread's weight: %v, want ErrThreadFull", err)
		}
		replaced := newThread("alice")
		replaced.ID, replaced.Weight = th.ID, 10
		if err := s.Import(ctx, []*memory.Thread{replaced}, true, base); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, th.ID, "alice", heavy("x-1", 11), exchange("q", "a"), 10, base,
			hour); err != nil {
			t.Errorf("an append to a thread replaced by a lighter one: %v", err)
		}
		if head, _, err := s.Head(ctx, th.ID, base); err != nil || head.Weight != 21 {
			t.Errorf("the replaced thread: %+v, %v; want it weighing 21", head, err)
		}
	})

	t.Run("the turn limit is told apart from the weight", func(t *testing.T) {
		s := newStore(t)
		th := newThread("alice")
		if err := s.Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		_, err := s.Append(ctx, th.ID, "alice", heavy("x-1", 1), exchange("q", "a"), 1, base, hour)
		if !errors.Is(err, memory.ErrTurnLimit) || errors.Is(err, memory.ErrThreadFull) {
			t.Errorf("an append past the turn limit: %v, want ErrTurnLimit alone", err)
		}
	})
}

// runClientWeight checks ClientWeight: what a client's live threads weigh
// together (and memory.ThreadOverhead each), created, imported and
// appended to, and nothing of another client's threads, of a deleted one,
// or of one expired by now.
func runClientWeight(t *testing.T, newStore func(t *testing.T) memory.Store) {
	ctx := context.Background()
	t.Run("a client's threads weigh what they hold together", func(t *testing.T) {
		s := newStore(t)
		weigh := func(client string, now time.Time) int64 {
			t.Helper()
			w, err := s.ClientWeight(ctx, client, now)
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		if w := weigh("alice", base); w != 0 {
			t.Errorf("a client without threads weighs %d, want 0", w)
		}
		created, imported, other, deleted := newThread("alice"), newThread("alice"), newThread("bob"),
			newThread("alice")
		created.Weight, imported.Weight, other.Weight, deleted.Weight = 1_000, 20_000, 300_000, 4_000_000
		for _, th := range []*memory.Thread{created, other, deleted} {
			if err := s.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
		}
		imported.ExpiresAt = base.Add(2 * time.Hour)
		if err := s.Import(ctx, []*memory.Thread{imported}, false, base); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Append(ctx, created.ID, "alice", memory.Exchange{ID: "x", Weight: 500}, exchange("q", "a"), 10,
			base, base.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		if err := s.Delete(ctx, deleted.ID); err != nil {
			t.Fatal(err)
		}
		// Each thread counts memory.ThreadOverhead beside its weight.
		const each = memory.ThreadOverhead
		if w := weigh("alice", base); w != 21_500+2*each {
			t.Errorf("alice's threads weigh %d, want %d", w, 21_500+2*each)
		}
		if w := weigh("bob", base); w != 300_000+each {
			t.Errorf("bob's threads weigh %d, want %d", w, 300_000+each)
		}
		// An hour on, the threads written at base have expired; the import
		// lives two.
		if w := weigh("alice", base.Add(time.Hour)); w != 20_000+each {
			t.Errorf("alice's live threads an hour on weigh %d, want %d", w, 20_000+each)
		}
	})
}
