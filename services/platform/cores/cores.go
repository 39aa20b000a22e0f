package cores

import (
	"context"
	"log/slog"
	"runtime"
	"sync"
	"time"
)

// The Governor looks every tick. One tick in which calls overlapped for
// more than widenAbove of it gives the process its cores; narrowAfter
// ticks in a row in which they overlapped for less than narrowBelow take
// them back.
const (
	tick        = 100 * time.Millisecond
	widenAbove  = 0.2
	narrowBelow = 0.02
	narrowAfter = 5
)

// Governor counts the calls in flight and sets GOMAXPROCS from how often
// they overlap. Use New.
type Governor struct {
	setProcs func(wide bool) // the runtime's, but in tests
	logger   *slog.Logger

	mu       sync.Mutex
	inFlight int
	since    time.Time     // when inFlight last changed, or the tick began
	overlap  time.Duration // how long more than one call was in flight this tick
	started  time.Time     // when this tick began
	wide     bool
	quiet    int // ticks in a row with little overlap, while wide
}

// New returns a Governor that changes nothing until Run.
func New(logger *slog.Logger) *Governor {
	return &Governor{setProcs: setRuntimeProcs, logger: logger, wide: true}
}

func setRuntimeProcs(wide bool) {
	if wide {
		runtime.SetDefaultGOMAXPROCS()
	} else {
		runtime.GOMAXPROCS(1)
	}
}

// Begin counts a call in flight until end is called, once.
func (g *Governor) Begin() (end func()) {
	g.change(+1)
	return func() { g.change(-1) }
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
}

// Run puts the process on one core and decides at every tick until ctx
// ends; it then leaves the process with Go's own GOMAXPROCS.
func (g *Governor) Run(ctx context.Context) {
	g.mu.Lock()
	g.started, g.since, g.overlap = time.Now(), time.Now(), 0
	g.setWide(false)
	g.mu.Unlock()
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			g.mu.Lock()
			g.setWide(true)
			g.mu.Unlock()
			return
		case <-t.C:
			g.decide()
		}
	}
}

// decide ends a tick: it sets the cores from how much of the tick calls
// overlapped, and begins the next.
func (g *Governor) decide() {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := time.Now()
	overlap := g.overlap
	if g.inFlight > 1 {
		overlap += now.Sub(g.since)
	}
	share := 0.0
	if d := now.Sub(g.started); d > 0 {
		share = float64(overlap) / float64(d)
	}
	g.started, g.since, g.overlap = now, now, 0
	switch {
	case !g.wide && share > widenAbove:
		g.setWide(true)
	case g.wide && share < narrowBelow:
		if g.quiet++; g.quiet >= narrowAfter {
			g.setWide(false)
		}
	case g.wide:
		g.quiet = 0
	}
}

func (g *Governor) setWide(wide bool) {
	if g.wide == wide {
		return
	}
	g.wide, g.quiet = wide, 0
	g.setProcs(wide)
	if wide {
		g.logger.Debug("calls overlap: running on every core", "GOMAXPROCS", runtime.GOMAXPROCS(0))
	} else {
		g.logger.Debug("calls come one at a time: running on one core", "GOMAXPROCS", 1)
	}
}
