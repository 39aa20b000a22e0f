package memory_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
)

// The client bound's tests of writes at once: what a weighing reads while
// others are stored.

// TestWritesAtOnceShareTheRoom: a weighing sees only what is stored, and
// writes near the bound at once were each admitted beside what was stored,
// none beside the others: 16 writes of 3 MiB at 27 of 32 MiB all went in.
// Here 8 of a unit go at 6 units of 8 (a unit and a thread's overhead
// each): one fits.
func TestWritesAtOnceShareTheRoom(t *testing.T) {
	t.Parallel()
	store := &gatedCreates{Store: memstore.New(), gate: make(chan struct{})}
	const unit = 64 << 10
	svc := bounded(store, 8*unit, nil)
	text := func(n int) []memory.Turn { return exchange("q", strings.Repeat("x", n)) }
	store.open()
	if _, err := chatIn(svc, "mallory", text(6*unit)); err != nil {
		t.Fatal(err)
	}
	store.close()
	var wg sync.WaitGroup
	var admitted atomic.Int32
	for range 8 {
		wg.Go(func() {
			if _, err := chatIn(svc, "mallory", text(unit)); err == nil {
				admitted.Add(1)
			} else if !errors.Is(err, memory.ErrClientFull) {
				t.Error(err)
			}
		})
	}
	store.waitFor(t, 1) // the one that fits is held in the store
	store.open()        // and the others were refused meanwhile, or go in now
	wg.Wait()
	if n := admitted.Load(); n != 1 {
		t.Errorf("%d writes of a unit at once went in beside 6 units of 8, want 1", n)
	}
}

// gatedCreates holds each Create until the gate opens.
type gatedCreates struct {
	memory.Store
	gate    chan struct{}
	mu      sync.Mutex
	waiting int
}

func (g *gatedCreates) Create(ctx context.Context, t *memory.Thread) error {
	g.mu.Lock()
	g.waiting++
	gate := g.gate
	g.mu.Unlock()
	<-gate
	return g.Store.Create(ctx, t)
}

func (g *gatedCreates) open() { g.mu.Lock(); close(g.gate); g.mu.Unlock() }
func (g *gatedCreates) close() {
	g.mu.Lock()
	g.gate = make(chan struct{})
	g.waiting = 0
	g.mu.Unlock()
}

// waitFor waits until n creates are held at the gate.
func (g *gatedCreates) waitFor(t *testing.T, n int) { <-g.reached(t, n) }

// reached is closed once n creates are held at the gate; its watch ends
// with the test.
func (g *gatedCreates) reached(t *testing.T, n int) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		for {
			g.mu.Lock()
			w := g.waiting
			g.mu.Unlock()
			if w >= n {
				close(done)
				return
			}
			select {
			case <-t.Context().Done():
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	return done
}

// TestAWeighingCountsTheWritesNotYetStored: a weighing reads what is
// stored, so a write admitted before it and still being stored is added
// to it; else a write weighed meanwhile was admitted beside the stored
// threads alone.
func TestAWeighingCountsTheWritesNotYetStored(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store := &gatedCreates{Store: memstore.New(), gate: make(chan struct{})}
	const unit = 64 << 10
	svc := bounded(store, 8*unit, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	text := func(n int) []memory.Turn { return exchange("q", strings.Repeat("x", n)) }
	store.open()
	if _, err := chatIn(svc, "mallory", text(4*unit)); err != nil {
		t.Fatal(err)
	}
	store.close()
	first := make(chan error, 1)
	go func() {
		_, err := chatIn(svc, "mallory", text(3*unit))
		first <- err
	}()
	store.waitFor(t, 1) // admitted by the count, and being stored
	mu.Lock()
	now = now.Add(2 * quotaWeighedAgain)
	mu.Unlock()
	second := make(chan error, 1)
	go func() {
		_, err := chatIn(svc, "mallory", text(3*unit))
		second <- err
	}()
	// Refused, or admitted: then it reaches the store, and waits there.
	select {
	case err := <-second:
		if !errors.Is(err, memory.ErrClientFull) {
			t.Errorf("a write weighed while another was being stored: %v, want ErrClientFull", err)
		}
	case <-store.reached(t, 2):
		t.Error("a write weighed while another was being stored was admitted beside the stored threads alone")
	}
	store.open()
	if err := <-first; err != nil {
		t.Errorf("the write being stored: %v", err)
	}
}

// quotaWeighedAgain is past the time a client's count is trusted.
const quotaWeighedAgain = time.Minute

// TestAWriteStoredWhileTheClientIsWeighedStaysCounted: a weighing reads
// the store while writes go on; one admitted before it that is stored
// while it reads is in what it read or not, and was counted in neither
// (no longer pending): the client then wrote past its bound.
func TestAWriteStoredWhileTheClientIsWeighedStaysCounted(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	creates := &gatedCreates{Store: memstore.New(), gate: make(chan struct{})}
	store := &gatedWeighs{gatedCreates: creates, read: make(chan struct{}), answer: make(chan struct{})}
	const unit = 64 << 10
	svc := bounded(store, 16*unit, func() time.Time { mu.Lock(); defer mu.Unlock(); return now })
	text := func(n int) []memory.Turn { return exchange("q", strings.Repeat("x", n)) }
	create := func(n int) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := chatIn(svc, "mallory", text(n))
			done <- err
		}()
		return done
	}
	creates.open()
	store.pass() // the first weighing
	if err := <-create(6 * unit); err != nil {
		t.Fatal(err)
	}
	creates.close()
	first := create(5 * unit) // admitted by the count, held in the store
	creates.waitFor(t, 1)
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	second := create(6 * unit) // weighs: reads the store without the first
	<-store.read
	creates.open() // the first is stored while the weighing reads
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	close(store.answer)
	if err := <-second; !errors.Is(err, memory.ErrClientFull) {
		t.Errorf("a write weighed while another was stored: %v, want ErrClientFull (6 + 5 + 6 units of 16)", err)
	}
}

// gatedWeighs reads a client's threads when asked, and answers once told.
type gatedWeighs struct {
	*gatedCreates
	read, answer chan struct{}
	passed       bool
}

// pass lets the next weighing through at once.
func (g *gatedWeighs) pass() { g.passed = true }

func (g *gatedWeighs) ClientWeight(ctx context.Context, client string, now time.Time) (int64, error) {
	w, err := g.gatedCreates.ClientWeight(ctx, client, now)
	if g.passed {
		g.passed = false
		return w, err
	}
	g.read <- struct{}{}
	<-g.answer
	return w, err
}
