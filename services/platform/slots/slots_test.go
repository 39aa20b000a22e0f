package slots

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// Each client has its own slots; a released one is free again, once.
func TestEachClientHasSlotsOfItsOwn(t *testing.T) {
	t.Parallel()
	p := New(2)
	var held []func()
	for i := range 2 {
		release, ok := p.TryTake("alice")
		if !ok {
			t.Fatalf("alice's slot %d refused, want 2", i+1)
		}
		held = append(held, release)
	}
	if _, ok := p.TryTake("alice"); ok {
		t.Error("alice's third slot taken, want at most 2")
	}
	release, ok := p.TryTake("bob")
	if !ok {
		t.Fatal("bob's first slot refused while alice held hers")
	}
	release()
	held[0]()
	held[0]() // twice: frees one slot, not two
	if _, ok := p.TryTake("alice"); !ok {
		t.Error("alice's slot refused once one of hers was released")
	}
	if _, ok := p.TryTake("alice"); ok {
		t.Error("a slot released twice freed two")
	}
}

// Take waits for a slot: it gets one released meanwhile, gives up with
// its caller, or is refused once the wait is over; and a client no one
// waits on is forgotten.
func TestTakeWaitsItsTurn(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		p := New(1)
		release, err := p.Take(t.Context(), "alice", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		got := make(chan error, 1)
		go func() {
			r, err := p.Take(t.Context(), "alice", time.Minute)
			if err == nil {
				r()
			}
			got <- err
		}()
		synctest.Wait()
		release()
		if err := <-got; err != nil {
			t.Errorf("a Take waiting while the slot was released: %v", err)
		}
		release, _ = p.Take(t.Context(), "alice", time.Second)
		ctx, cancel := context.WithCancel(t.Context())
		go func() { _, err := p.Take(ctx, "alice", time.Minute); got <- err }()
		synctest.Wait()
		cancel()
		if err := <-got; !errors.Is(err, context.Canceled) {
			t.Errorf("a Take whose caller left: %v, want context.Canceled", err)
		}
		start := time.Now()
		if _, err := p.Take(t.Context(), "alice", time.Second); !errors.Is(err, ErrBusy) ||
			time.Since(start) != time.Second {
			t.Errorf("a Take that found no slot: %v after %s, want ErrBusy after 1s", err, time.Since(start))
		}
		release()
		if n := len(p.clients); n != 0 {
			t.Errorf("%d clients kept with no one holding or waiting, want none", n)
		}
	})
}
