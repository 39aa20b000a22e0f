package slots

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Work waits while what runs weighs too much to add its own, in the order
// it came, up to its wait or until its caller leaves; work heavier than
// the whole budget runs alone.
func TestABudgetBoundsTheWeightRunningAtOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		b := NewBudget(10)
		ctx := t.Context()
		heavy, err := b.Take(ctx, 7, time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		order := make(chan string, 2)
		for _, w := range []struct {
			name   string
			weight int64
		}{{"first", 5}, {"second", 1}} {
			go func() {
				release, err := b.Take(ctx, w.weight, time.Minute)
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

		all, err := b.Take(ctx, 50, time.Minute)
		if err != nil {
			t.Fatalf("work heavier than the budget: %v, want it to run alone", err)
		}
		start := time.Now()
		if _, err := b.Take(ctx, 1, time.Second); !errors.Is(err, ErrOverBudget) || time.Since(start) != time.Second {
			t.Errorf("work beside the heaviest: %v after %s, want ErrOverBudget after 1s", err, time.Since(start))
		}
		soon, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := b.Take(soon, 1, time.Minute); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("work whose caller's deadline came before its wait's end: %v, want context.DeadlineExceeded", err)
		}
		leaving, leave := context.WithCancel(ctx)
		left := make(chan error, 1)
		go func() {
			_, err := b.Take(leaving, 1, time.Minute)
			left <- err
		}()
		synctest.Wait()
		leave()
		if err := <-left; !errors.Is(err, context.Canceled) {
			t.Errorf("work whose caller left while it waited: %v, want context.Canceled", err)
		}
		all()
		if release, err := b.Take(ctx, 10, 0); err != nil {
			t.Errorf("the whole budget once free: %v", err)
		} else {
			release()
		}
	})
}

// Holders counts a client's work until each piece is released, once.
func TestHoldersCountEachClientsWork(t *testing.T) {
	t.Parallel()
	h := NewHolders()
	released := 0
	first := h.Hold("alice", func() { released++ })
	second := h.Hold("alice", func() { released++ })
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
