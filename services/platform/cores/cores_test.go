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

// change is what a Governor set, and when, since the test began.
type change struct {
	Wide bool
	At   time.Duration
}

// procsLog records what a Governor set.
type procsLog struct {
	mu    sync.Mutex
	begun time.Time
	set   []change
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

// fakeCPU is the process's CPU time: it runs with the clock while busy,
// at share of it.
type fakeCPU struct {
	mu    sync.Mutex
	used  time.Duration
	since time.Time
	share float64
}

func (c *fakeCPU) read() (time.Duration, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used + time.Duration(c.share*float64(time.Since(c.since))), true
}

func (c *fakeCPU) busy(share float64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.used += time.Duration(c.share * float64(time.Since(c.since)))
	c.since, c.share = time.Now(), share
}

// running starts a Governor whose changes go to the returned log, on a
// process that uses the CPU cpu says, and stops it when the test ends.
func running(t *testing.T) (*Governor, *procsLog, *fakeCPU, context.CancelFunc) {
	log := &procsLog{begun: time.Now()}
	cpu := &fakeCPU{since: time.Now()}
	g := newGovernor(log.record, cpu.read, slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		g.Run(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return g, log, cpu, cancel
}

// overlapping runs n calls at once for d.
func overlapping(g *Governor, n int, d time.Duration) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			end := g.Begin()
			time.Sleep(d)
			end()
		})
	}
	wg.Wait()
}

func checkChanges(t *testing.T, log *procsLog, want ...change) {
	t.Helper()
	if diff := cmp.Diff(want, log.changes()); diff != "" {
		t.Errorf("cores set (-want +got):\n%s", diff)
	}
}

// TestCallsOneAtATimeKeepOneCore: an agent calling again as soon as each
// answer comes, its calls touching for an instant as one's answer is
// written while the next begins, never gives the process its cores back.
func TestCallsOneAtATimeKeepOneCore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _, _ := running(t)
		for range 2000 {
			end := g.Begin()
			time.Sleep(time.Millisecond)
			next := g.Begin() // the next call, 10 µs before this one ends
			time.Sleep(10 * time.Microsecond)
			end()
			next()
		}
		checkChanges(t, log, change{Wide: false})
	})
}

// TestOverlappingCallsGetEveryCoreWithinATick of their overlapping, even
// after an idle second, and keep them while they overlap.
func TestOverlappingCallsGetEveryCoreWithinATick(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _, _ := running(t)
		time.Sleep(1050 * time.Millisecond) // idle: one core, looking every second
		overlapping(g, 4, 3*time.Second)
		checkChanges(t, log, change{Wide: false}, change{Wide: true, At: 1150 * time.Millisecond})
	})
}

// TestQuietGivesBackTheCores: once calls stop overlapping, the process
// goes back to one core after narrowAfter quiet looks; an overlap among
// them starts the count again, and so does a second wide spell.
func TestQuietGivesBackTheCores(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _, _ := running(t)
		time.Sleep(30 * time.Millisecond)
		overlapping(g, 2, 310*time.Millisecond) // 30 – 340 ms: all cores at the look at 100
		time.Sleep(220 * time.Millisecond)      // looks at 400 (40 ms of overlap: not quiet) and 500
		overlapping(g, 2, 50*time.Millisecond)  // 560 – 610 ms: the looks at 600 and 700 are not quiet
		time.Sleep(890 * time.Millisecond)      // quiet at 800 – 1200: one core at 1200
		overlapping(g, 2, 250*time.Millisecond) // 1500 – 1750, in an idle second: all cores a tick on, at 1600
		time.Sleep(time.Second)                 // quiet at 1900 – 2300: one core at 2300
		checkChanges(t, log, change{Wide: false}, change{Wide: true, At: 100 * time.Millisecond},
			change{Wide: false, At: 1200 * time.Millisecond}, change{Wide: true, At: 1600 * time.Millisecond},
			change{Wide: false, At: 2300 * time.Millisecond})
	})
}

// TestALittleOverlap: calls that overlap for a tenth of the time neither
// widen a process on one core nor narrow one on every core; a hundredth
// narrows it.
func TestALittleOverlap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _, _ := running(t)
		pattern := func(overlap time.Duration, ticks int) {
			for range ticks {
				overlapping(g, 2, overlap)
				time.Sleep(tick - overlap)
			}
		}
		time.Sleep(20 * time.Millisecond)
		pattern(10*time.Millisecond, 20)        // 20 – 2020 ms: stays on one core
		overlapping(g, 2, 200*time.Millisecond) // 2020 – 2220 ms: all cores at 2120
		pattern(10*time.Millisecond, 20)        // 2220 – 4220 ms: stays on every core
		pattern(time.Millisecond, 10)           // from 4220 ms: quiet from the look at 4320, one core at 4720
		checkChanges(t, log, change{Wide: false}, change{Wide: true, At: 2120 * time.Millisecond},
			change{Wide: false, At: 4720 * time.Millisecond})
	})
}

// TestABusyCoreGetsEveryCore: a process that fills its one core with work
// that is no call (the gateway, roles served to others, one heavy call)
// gets every core at a look that finds it so, within an idle second, and
// keeps them while it uses most of one; at half a core it goes back.
func TestABusyCoreGetsEveryCore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		_, log, cpu, _ := running(t)
		time.Sleep(50 * time.Millisecond)
		cpu.busy(0.95)              // from 50 ms: the look at 100 finds half a core, the next, at 1100, all of one
		time.Sleep(2 * time.Second) // busy still: every core
		cpu.busy(0.5)               // from 2050 ms: quiet from the look at 2200, one core at 2600
		time.Sleep(time.Second)
		checkChanges(t, log, change{Wide: false}, change{Wide: true, At: 1100 * time.Millisecond},
			change{Wide: false, At: 2600 * time.Millisecond})
	})
}

// TestABusyCoreDoesNotFlap: a process that needs most of one core on one
// core, and a little less on every core, stays on every core: it narrows
// only below calmCore. Each change would stop the world.
func TestABusyCoreDoesNotFlap(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		log := &procsLog{begun: time.Now()}
		cpu := &fakeCPU{since: time.Now(), share: 0.95}
		g := newGovernor(func(wide bool) {
			log.record(wide)
			cpu.busy(map[bool]float64{true: 0.85, false: 0.95}[wide])
		}, cpu.read, slog.New(slog.DiscardHandler))
		ctx, cancel := context.WithCancel(t.Context())
		go g.Run(ctx)
		time.Sleep(10 * time.Second)
		cancel()
		synctest.Wait()
		checkChanges(t, log, change{Wide: false}, change{Wide: true, At: 100 * time.Millisecond})
	})
}

// TestCallsThatKeepOverlappingGetEveryCore: two agents whose short calls
// overlap most of the time, a second call beginning every few
// milliseconds, get every core at the next look: a wake for each second
// call would have put the look off for good.
func TestCallsThatKeepOverlappingGetEveryCore(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _, _ := running(t)
		agent := func(offset time.Duration) {
			time.Sleep(offset)
			for range 300 { // 8 ms calls, 2 ms apart: 3 s
				end := g.Begin()
				time.Sleep(8 * time.Millisecond)
				end()
				time.Sleep(2 * time.Millisecond)
			}
		}
		var wg sync.WaitGroup
		wg.Go(func() { agent(0) })
		wg.Go(func() { agent(5 * time.Millisecond) })
		wg.Wait()
		checkChanges(t, log, change{Wide: false}, change{Wide: true, At: 100 * time.Millisecond})
	})
}

// TestEndCountsOnce: a call's end called twice ends it once; the count
// stays right, and overlapping calls still widen.
func TestEndCountsOnce(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		g, log, _, _ := running(t)
		end := g.Begin()
		end()
		end()
		time.Sleep(50 * time.Millisecond)
		overlapping(g, 2, 300*time.Millisecond) // 50 – 350 ms: all cores at the look at 100
		checkChanges(t, log, change{Wide: false}, change{Wide: true, At: 100 * time.Millisecond})
	})
}

// TestEndOfRunGivesBackTheCores: a Governor that stops leaves the process
// with Go's own GOMAXPROCS, not one core.
func TestEndOfRunGivesBackTheCores(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		_, log, _, stop := running(t)
		time.Sleep(time.Second)
		stop()
		synctest.Wait()
		checkChanges(t, log, change{Wide: false}, change{Wide: true, At: time.Second})
	})
}
