package slots

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Work waits while what runs weighs too much to add its own, a client's
// in the order it came, up to its wait or until its caller leaves; work
// heavier than the whole budget runs alone.
func TestABudgetBoundsTheWeightRunningAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10)
		ctx := t.Context()
		heavy, err := b.Take(ctx, "alice", 7, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		order := make(chan string, 2)
		for _, w := range []struct {
			name   string
			weight int64
		}{{"first", 5}, {"second", 1}} {
			go func() {
				release, err := b.Take(ctx, "alice", w.weight, time.Minute)
				if err != nil {
					t.Errorf("%s: %v", w.name, err)
					return
				}
				order <- w.name
				release()
			}()
			synctest.Wait()
		}
		// second would fit beside the 7, but first came before it.
		select {
		case name := <-order:
			t.Fatalf("%s ran beside work of 7 in a budget of 10 while work of 5 waited, want it to wait", name)
		default:
		}
		heavy()
		heavy() // twice: frees its weight once
		<-order
		<-order

		all, err := b.Take(ctx, "alice", 50, time.Minute)
		if err != nil {
			t.Fatalf("work heavier than the budget: %v, want it to run alone", err)
		}
		start := time.Now()
		if _, err := b.Take(ctx, "alice", 1, time.Second); !errors.Is(err, ErrOverBudget) || time.Since(start) != time.Second {
			t.Errorf("work beside the heaviest: %v after %s, want ErrOverBudget after 1s", err, time.Since(start))
		}
		soon, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := b.Take(soon, "alice", 1, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("work whose caller's deadline came before its wait's end: %v, want context.DeadlineExceeded", err)
		}
		leaving, leave := context.WithCancel(ctx)
		left := make(chan error, 1)
		go func() {
			_, err := b.Take(leaving, "alice", 1, time.Minute)
			left <- err
		}()
		synctest.Wait()
		leave()
		if err := <-left; !errors.Is(err, context.Canceled) {
			t.Errorf("work whose caller left while it waited: %v, want context.Canceled", err)
		}
		all()
		if release, err := b.Take(ctx, "alice", 10, 0); err != nil {
			t.Errorf("the whole budget once free: %v", err)
		} else {
			release()
		}
	})
}

// When room comes free, it goes to the waiting client served least
// recently, not to the work that came first: one client's queue of heavy
// reads, served in the order they came, kept another's read of a kilobyte
// waiting for every one of them (0.14 to 0.36 s against 1 ms).
func TestABudgetServesTheClientServedLeastRecentlyFirst(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10)
		ctx := t.Context()
		running, err := b.Take(ctx, "heavy", 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		order := make(chan string, 4)
		for _, w := range []struct {
			client, name string
			weight       int64
		}{{"heavy", "heavy's second", 10}, {"heavy", "heavy's third", 10}, {"light", "light's", 1}} {
			go func() {
				release, err := b.Take(ctx, w.client, w.weight, time.Minute)
				if err != nil {
					t.Errorf("%s: %v", w.name, err)
					return
				}
				order <- w.name
				release()
			}()
			synctest.Wait()
		}
		running()
		var got []string
		for range 3 {
			got = append(got, <-order)
		}
		want := []string{"light's", "heavy's second", "heavy's third"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("the order work ran in (-want +got):\n%s", diff)
		}
	})
}

// Work first in line is not passed for ever: two clients taking turns,
// each with one piece at a time, were forgotten between pieces and came
// back as never served, ahead of a client that had been served and waited
// for the whole budget, which they kept from it until its wait ran out.
func TestWorkFirstInLineIsNotPassedForEver(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10)
		ctx := t.Context()
		first, err := b.Take(ctx, "patient", 1, time.Minute) // served once
		if err != nil {
			t.Fatal(err)
		}
		whole := make(chan error, 1)
		go func() {
			release, err := b.Take(ctx, "patient", 10, 10*time.Second)
			if err == nil {
				release()
			}
			whole <- err
		}()
		synctest.Wait()
		held, err := b.Take(ctx, "one", 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		first()
		for i := 0; ; i++ {
			select {
			case err := <-whole:
				if err != nil {
					t.Errorf("the whole budget, asked for first: %v after %d light pieces passed it; want it run",
						err, i)
				}
				held()
				return
			default:
			}
			next, _ := b.Take(ctx, []string{"two", "one"}[i%2], 1, 0) // nil when refused
			time.Sleep(100 * time.Millisecond)
			held()
			held = func() {}
			if next != nil {
				held = next
			}
			synctest.Wait()
		}
	})
}

// Work behind work first in line that gives up runs at once, not when
// room next comes free.
func TestWorkBehindWorkThatGaveUpRunsAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10)
		running, err := b.Take(t.Context(), "alice", 5, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		defer running()
		leaving, leave := context.WithCancel(t.Context())
		go func() { _, _ = b.Take(leaving, "bob", 10, time.Minute) }() // first in line; does not fit
		synctest.Wait()
		start := time.Now()
		time.AfterFunc(time.Second, leave)
		release, err := b.Take(t.Context(), "carol", 1, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		release()
		if waited := time.Since(start); waited != time.Second {
			t.Errorf("carol's work of 1 ran %s after she asked; want 1s, when bob's gave up", waited)
		}
		if len(b.clients) != 1 {
			t.Errorf("%d clients kept; want alice's alone, who holds room", len(b.clients))
		}
	})
}

// Holders counts a client's work until each piece is released, once.
func TestHoldersCountEachClientsWork(t *testing.T) {
	t.Parallel()
	h := NewHolders()
	released := 0
	first := h.Hold("alice", func() { released++ }, Cut{})
	second := h.Hold("alice", func() { released++ }, Cut{})
	if !h.Holding("alice") || h.Holding("bob") {
		t.Fatalf("alice holding %v, bob %v; want alice alone", h.Holding("alice"), h.Holding("bob"))
	}
	first()
	first() // twice: released once
	if !h.Holding("alice") || released != 1 {
		t.Errorf("after one release: alice holding %v, %d released; want her still holding, 1", h.Holding("alice"),
			released)
	}
	second()
	if h.Holding("alice") || released != 2 {
		t.Errorf("after both: alice holding %v, %d released; want neither held", h.Holding("alice"), released)
	}
}

// TestStaleHoldsOfOthersAreCut: a client that reads a thread slowly holds
// its room for as long as it likes (one read of 32 MiB at 6 KB/s, an
// hour and a half), and every other client's read of more than what was
// left waited out its wait and was refused. Stale work (its Cut says when)
// is cut while another client waits, once; the waiting client's own work,
// and work that is not stale or cannot be cut, are not.
func TestStaleHoldsOfOthersAreCut(t *testing.T) {
	t.Parallel()
	h := NewHolders()
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var cut []string
	hold := func(client, name string, stale bool) {
		h.Hold(client, func() {}, Cut{Off: func() { cut = append(cut, name) }, Stale: func(at time.Time) bool {
			return stale && at.Equal(now)
		}})
	}
	hold("bob", "bob's slow read", true)
	hold("carol", "carol's steady read", false)
	hold("alice", "alice's slow read", true)
	h.Hold("dave", func() {}, Cut{})                                            // nothing to cut it with
	h.Hold("erin", func() {}, Cut{Off: func() { cut = append(cut, "erin's") }}) // nothing says when
	if n := h.CutStale("alice", now); n != 1 {
		t.Errorf("CutStale cut %d holds, want 1", n)
	}
	h.CutStale("alice", now) // again: each is cut once
	if diff := cmp.Diff([]string{"bob's slow read"}, cut); diff != "" {
		t.Errorf("cut (-want +got):\n%s", diff)
	}
}

// TestReleasedWorkIsNotCut: a piece of work's room, given back, wakes the
// work waiting for it, which cuts the stale work it finds: the released
// piece must be gone by then, or work that is done (an answer written
// whole) is cut, and its answer dropped.
func TestReleasedWorkIsNotCut(t *testing.T) {
	t.Parallel()
	h := NewHolders()
	cut := false
	release := h.Hold("bob", func() { h.CutStale("alice", time.Now()) }, Cut{Off: func() { cut = true },
		Stale: func(time.Time) bool { return true }})
	release()
	if cut {
		t.Error("work was cut as its room, given back, woke a waiter")
	}
}

// TestACutClientGoesBehindTheWaiting: a client whose work was cut off for
// being slow (Demote) came back as new, ahead of the work that had waited
// for it; tokens taking turns at reads they never read kept another
// client's small reads waiting to their limit. Back within the demotion,
// it goes behind every client waiting.
func TestACutClientGoesBehindTheWaiting(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10)
		ctx := t.Context()
		running, err := b.Take(ctx, "bob", 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		order := make(chan string, 2)
		take := func(client string, weight int64) { takeInTurn(t, b, order, client, weight) }
		take("alice", 10)
		b.Demote("bob", time.Minute) // its read was cut
		running()
		<-order // alice's, the room free of bob's
		running2, err := b.Take(ctx, "carol", 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		take("dave", 10)
		take("bob", 10) // back, cut a moment ago
		take("erin", 10)
		running2()
		var got []string
		for range 3 {
			got = append(got, <-order)
		}
		if diff := cmp.Diff([]string{"dave", "erin", "bob"}, got); diff != "" {
			t.Errorf("the order work ran in (-want +got):\n%s", diff)
		}
	})
}

// TestACutClientsWaitingWorkGoesBehindToo: a client cut while more of its
// work waits (two connections of one token) kept that work's place in
// line, ahead of the others.
func TestACutClientsWaitingWorkGoesBehindToo(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10)
		ctx := t.Context()
		running, err := b.Take(ctx, "carol", 10, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		order := make(chan string, 2)
		take := func(client string) { takeInTurn(t, b, order, client, 10) }
		take("bob")   // its second connection, waiting
		take("alice") // behind it
		b.Demote("bob", time.Minute)
		running()
		got := []string{<-order, <-order}
		if diff := cmp.Diff([]string{"alice", "bob"}, got); diff != "" {
			t.Errorf("the order work ran in (-want +got):\n%s", diff)
		}
	})
}

// takeInTurn has client take weight of b in a goroutine of the bubble,
// which says on order when its turn came and gives the weight back; it
// returns once the take is running or waiting.
func takeInTurn(t *testing.T, b *Budget, order chan<- string, client string, weight int64) {
	go func() {
		release, err := b.Take(t.Context(), client, weight, time.Minute)
		if err != nil {
			t.Errorf("%s: %v", client, err)
			return
		}
		order <- client
		release()
	}()
	synctest.Wait()
}
