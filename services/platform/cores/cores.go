package cores

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// The Governor looks every tick, or every idleTick while the process is on
// one core with no call in flight. One look at which calls overlapped for
// more than widenAbove of the time since the last, or the process used
// more than busyCore of one core's time, gives the process its cores;
// narrowAfter looks in a row at which calls overlapped for less than
// narrowBelow of the time and the process used less than calmCore take
// them back. Each rule has a gap between its two values, so that a process
// near one does not go back and forth: every change stops the world.
const (
	tick        = 100 * time.Millisecond
	idleTick    = time.Second
	widenAbove  = 0.2
	narrowBelow = 0.02
	narrowAfter = 5
	busyCore    = 0.9
	calmCore    = 0.6
)

// Governor counts the calls in flight and sets GOMAXPROCS from how often
// they overlap and how busy the process is. Use New.
type Governor struct {
	setProcs func(wide bool)              // the runtime's, but in tests
	cpuTime  func() (time.Duration, bool) // the process's CPU time so far, if known
	logger   *slog.Logger

	mu       sync.Mutex
	inFlight int
	since    time.Time     // when inFlight last changed, or the look began
	overlap  time.Duration // how long more than one call was in flight since the last look
	started  time.Time     // when the time since the last look began
	cpuAt    time.Duration // the process's CPU time then
	wide     bool
	quiet    int // looks in a row with little overlap and CPU, while wide
	// idle is Run waiting idleTick; overlapping hears of a second call in
	// flight meanwhile, so that Run looks a tick later, not an idle second.
	// Only then: while Run looks every tick, a wake would put off its look,
	// and calls that kept overlapping would put it off for good.
	idle        bool
	overlapping chan struct{}
}

// New returns a Governor that changes nothing until Run.
func New(logger *slog.Logger) *Governor {
	return newGovernor(setRuntimeProcs, processCPU, logger)
}

func newGovernor(setProcs func(bool), cpuTime func() (time.Duration, bool), logger *slog.Logger) *Governor {
	return &Governor{
		setProcs:    setProcs,
		cpuTime:     cpuTime,
		logger:      logger,
		wide:        true,
		overlapping: make(chan struct{}, 1),
	}
}

func setRuntimeProcs(wide bool) {
	if wide {
		runtime.SetDefaultGOMAXPROCS()
	} else {
		runtime.GOMAXPROCS(1)
	}
}

// Begin counts a call in flight until end is called; calls of end after
// the first change nothing.
func (g *Governor) Begin() (end func()) {
	g.change(+1)
	var ended atomic.Bool
	return func() {
		if !ended.Swap(true) {
			g.change(-1)
		}
	}
}

func (g *Governor) change(by int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	if g.inFlight > 1 {
		g.overlap += now.Sub(g.since)
	}
	g.inFlight += by
	g.since = now
	if by > 0 && g.inFlight == 2 && g.idle {
		g.idle = false
		select {
		case g.overlapping <- struct{}{}:
		default: // Run has been told already
		}
	}
}

// Run puts the process on one core and looks again and again until ctx
// ends; it then leaves the process with Go's own GOMAXPROCS. The runtime
// is changed outside the lock Begin takes: a change stops the world, and
// first waits for a garbage collection in progress.
func (g *Governor) Run(ctx context.Context) {
	g.mu.Lock()
	g.restartNow()
	g.wide = false
	g.mu.Unlock()
	g.apply(false)
	timer := time.NewTimer(tick)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			g.mu.Lock()
			narrow := !g.wide
			g.wide = true
			g.mu.Unlock()
			if narrow {
				g.apply(true)
			}
			return
		case <-g.overlapping:
			// The next look judges the overlap from now on, not diluted in
			// an idle second before it.
			g.mu.Lock()
			g.restartNow()
			g.mu.Unlock()
			timer.Stop()
			timer.Reset(tick)
		case <-timer.C:
			changed, wide, next := g.look()
			if changed {
				g.apply(wide)
			}
			timer.Reset(next)
		}
	}
}

// look ends the time since the last look: it decides the cores from how
// much of that time calls overlapped and the process used, and says when
// to look next.
func (g *Governor) look() (changed, wide bool, next time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	overlap := g.overlap
	if g.inFlight > 1 {
		overlap += now.Sub(g.since)
	}
	overlapShare, cpuShare := 0.0, 0.0
	cpu, known := g.cpuTime()
	if d := now.Sub(g.started); d > 0 {
		overlapShare = float64(overlap) / float64(d)
		if known {
			cpuShare = float64(cpu-g.cpuAt) / float64(d)
		}
	}
	g.restart(now, cpu)
	switch {
	case !g.wide && (overlapShare > widenAbove || cpuShare > busyCore):
		g.wide, changed = true, true // quiet is 0 on one core: narrowing left it so
	case g.wide && overlapShare < narrowBelow && cpuShare < calmCore:
		if g.quiet++; g.quiet >= narrowAfter {
			g.wide, g.quiet, changed = false, 0, true
		}
	case g.wide:
		g.quiet = 0
	}
	next = tick
	if g.idle = !g.wide && g.inFlight == 0; g.idle {
		next = idleTick
	}
	return changed, g.wide, next
}

// restart begins the time the next look judges at now, when the process
// had used cpu. g.mu is held.
func (g *Governor) restart(now time.Time, cpu time.Duration) {
	g.started, g.since, g.overlap, g.cpuAt = now, now, 0, cpu
}

// restartNow is restart from this moment.
func (g *Governor) restartNow() {
	cpu, _ := g.cpuTime()
	g.restart(time.Now(), cpu)
}

func (g *Governor) apply(wide bool) {
	g.setProcs(wide)
	if wide {
		g.logger.Debug("calls overlap or one core is busy: running on every core", "GOMAXPROCS",
			runtime.GOMAXPROCS(0))
	} else {
		g.logger.Debug("calls come one at a time: running on one core", "GOMAXPROCS", 1)
	}
}
