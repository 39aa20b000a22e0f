package call

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

// HealthWatch follows one service's health through the gRPC health Watch
// stream, so a call can ask whether the service serves without a round
// trip of its own.
type HealthWatch struct {
	down    atomic.Bool
	mu      sync.Mutex // orders answers and the verdicts on them
	answers uint64     // answers heard so far, under mu
	fresh   bool       // the current stream has not answered yet, under mu
	// afterGrace runs f once brokenGrace has passed (time.AfterFunc;
	// tests decide when).
	afterGrace func(f func())
}

// brokenGrace is how long the service still counts as up after its stream
// said NOT_SERVING or broke, while a new stream is opened. The connection
// spreads calls over every replica of the service, and the stream was on
// one of them: a replica that drains (a rolling update, a scale-in) says
// NOT_SERVING and ends its streams, one that dies just ends them, and
// either way a new stream reaches another replica within milliseconds. A
// replica lost is not the service lost. Calls meanwhile find out for
// themselves, from memory's own answers.
const brokenGrace = 500 * time.Millisecond

// heard records an answer on a stream. SERVING counts at once. So does
// NOT_SERVING as a stream's first answer: the replica it reached is not
// leaving (a draining server gives a new stream no answer, serve's health
// service) but cannot serve, and the connection sends a stream only to a
// replica that says it serves while one does. NOT_SERVING later on a
// stream counts only if nothing else is heard within brokenGrace: the
// replica may be leaving, and the next stream may find another.
func (w *HealthWatch) heard(serving bool) {
	w.mu.Lock()
	w.answers++
	seen, first := w.answers, w.fresh
	w.fresh = false
	if serving || first {
		w.down.Store(!serving)
	}
	w.mu.Unlock()
	if !serving && !first {
		w.afterGrace(func() { w.verdict(seen) })
	}
}

// broke records a stream that ended, or the start before any stream: the
// service is down unless a new stream answers within brokenGrace.
func (w *HealthWatch) broke() {
	w.mu.Lock()
	seen := w.answers
	w.fresh = true
	w.mu.Unlock()
	w.afterGrace(func() { w.verdict(seen) })
}

// verdict marks the service down unless an answer came after the first
// seen.
func (w *HealthWatch) verdict(seen uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.answers == seen {
		w.down.Store(true)
	}
}

// WatchHealth follows service on client until ctx ends. The service counts
// as up at first. SERVING, and NOT_SERVING as a stream's first answer,
// count at once (heard); a later NOT_SERVING, a broken stream, or no
// answer at all count as down only when nothing else is heard within
// brokenGrace. No answer comes while no replica serves: the connection
// checks its replicas' health itself (serve's service config) and sends the
// watch to none that says NOT_SERVING, so a memory whose store is down
// when the edge starts is never asked.
func WatchHealth(ctx context.Context, client healthpb.HealthClient, service string) *HealthWatch {
	return watchHealth(ctx, client, service, func(f func()) { time.AfterFunc(brokenGrace, f) })
}

// newHealthWatch is a watch that has heard nothing yet; afterGrace runs its
// verdicts once brokenGrace has passed.
func newHealthWatch(afterGrace func(func())) *HealthWatch {
	w := &HealthWatch{afterGrace: afterGrace}
	w.broke() // until a first answer
	return w
}

func watchHealth(ctx context.Context, client healthpb.HealthClient, service string,
	afterGrace func(func())) *HealthWatch {
	w := newHealthWatch(afterGrace)
	go func() {
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			// WaitForReady: while memory is unreachable the watch waits for
			// the connection to come back, and answers the moment it does.
			stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
			for err == nil {
				var resp *healthpb.HealthCheckResponse
				if resp, err = stream.Recv(); err == nil {
					w.heard(resp.GetStatus() == healthpb.HealthCheckResponse_SERVING)
					backoff = 100 * time.Millisecond
				}
			}
			if ctx.Err() != nil {
				return
			}
			w.broke()
			if status.Code(err) == codes.Unavailable {
				// The connection broke; the next Watch waits for it
				// (WaitForReady), so retrying soon cannot spin.
				backoff = 50 * time.Millisecond
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, time.Second)
		}
	}()
	return w
}

// Down tells whether the service last said it does not serve, or could
// not be reached, and nothing else was heard for brokenGrace since.
func (w *HealthWatch) Down() bool { return w != nil && w.down.Load() }
