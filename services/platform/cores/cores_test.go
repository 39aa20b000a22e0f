package cores

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// procsLog records what a Governor set, and when: "one" or "all", each
// with the time since the test began.
type procsLog struct {
	mu    sync.Mutex
	begun time.Time
	set   []change
}

type change struct {
	Wide bool
	At   time.Duration
}

func (l *procsLog) record(wide bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.set = append(l.set, change{wide, time.Since(l.begun)})
}

func (l *procsLog) changes() []change {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]change(nil), l.set...)
}

// running starts a Governor whose changes go to the returned log, and
// stops it when the test's bubble ends.
func running(t *testing.T) (*Governor, *procsLog, context.CancelFunc) {
	log := &procsLog{begun: time.Now()}
	g := &Governor{setProcs: log.record, logger: slog.New(slog.DiscardHandler), wide: true}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return g, log, cancel
}

// call is one call in flight for d.
func call(g *Governor, d time.Duration) {
	end := g.Begin()
	time.Sleep(d)
	end()
}

// TestCallsOneAtATimeKeepOneCore: an agent calling again as soon as each
// answer comes, its calls touching for an instant as one's answer is
// written while the next begins, never gives the process its cores back.
func TestCallsOneAtATimeKeepOneCore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _ := running(t)
		for range 2000 {
			end := g.Begin()
			time.Sleep(time.Millisecond)
			next := g.Begin() // the next call, 10 µs before this one ends
			time.Sleep(10 * time.Microsecond)
			end()
			next()
		}
		want := []change{{Wide: false, At: 0}}
		if diff := cmp.Diff(want, log.changes()); diff != "" {
			t.Errorf("cores set (-want +got):\n%s", diff)
		}
	})
}

// TestOverlappingCallsGetEveryCoreWithinATick, and keep them while they
// overlap.
func TestOverlappingCallsGetEveryCoreWithinATick(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _ := running(t)
		time.Sleep(time.Second) // idle: one core
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { call(g, 3*time.Second) })
		}
		wg.Wait()
		want := []change{{Wide: false, At: 0}, {Wide: true, At: 1100 * time.Millisecond}}
		if diff := cmp.Diff(want, log.changes()); diff != "" {
			t.Errorf("cores set (-want +got):\n%s", diff)
		}
	})
}

// TestQuietGivesBackTheCores: once calls stop overlapping, the process
// goes back to one core after narrowAfter quiet ticks; an overlap among
// them starts the count again.
func TestQuietGivesBackTheCores(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _ := running(t)
		time.Sleep(50 * time.Millisecond)
		var wg sync.WaitGroup
		wg.Go(func() { call(g, 300*time.Millisecond) })
		call(g, 300*time.Millisecond) // overlapping from 50 to 350 ms: all cores at 100
		wg.Wait()
		time.Sleep(250 * time.Millisecond) // quiet ticks at 400, 500 and 600 ms
		wg.Go(func() { call(g, 50*time.Millisecond) })
		call(g, 50*time.Millisecond) // overlapping from 600 to 650 ms: the count starts again
		wg.Wait()
		time.Sleep(2 * time.Second)
		want := []change{
			{Wide: false, At: 0},
			{Wide: true, At: 100 * time.Millisecond},
			// the tick at 400 ms still saw 50 ms of overlap; quiet at 500
			// and 600, not at 700 (50 ms of overlap), then quiet from 800.
			{Wide: false, At: 1200 * time.Millisecond},
		}
		if diff := cmp.Diff(want, log.changes()); diff != "" {
			t.Errorf("cores set (-want +got):\n%s", diff)
		}
	})
}

// TestEndOfRunGivesBackTheCores: a Governor that stops leaves the process
// with Go's own GOMAXPROCS, not one core.
func TestEndOfRunGivesBackTheCores(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		_, log, stop := running(t)
		time.Sleep(time.Second)
		stop()
		synctest.Wait()
		want := []change{{Wide: false, At: 0}, {Wide: true, At: time.Second}}
		if diff := cmp.Diff(want, log.changes()); diff != "" {
			t.Errorf("cores set (-want +got):\n%s", diff)
		}
	})
}
