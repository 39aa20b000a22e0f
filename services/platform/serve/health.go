package serve

import (
	"context"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"
)

// healthService is grpc-go's health service with Watch streams that end
// when the server starts to drain. A Watch stream lasts as long as its
// client (the edge watches memory for as long as it runs), and a graceful
// stop waits for every stream: without this, an idle memory role waited
// out the whole drain timeout for the edges watching it.
type healthService struct {
	*health.Server

	once     sync.Once
	draining chan struct{}
	stopping atomic.Bool // set as drain begins, before anything says NOT_SERVING

	mu      sync.Mutex
	reasons map[string]string // services held not ready (GRPC.SetNotReady), and why
}

// setReason holds service not ready for reason, or releases it ("").
func (h *healthService) setReason(service, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if reason == "" {
		delete(h.reasons, service)
		return
	}
	if h.reasons == nil {
		h.reasons = map[string]string{}
	}
	h.reasons[service] = reason
}

// Check answers as health.Server does, except about a service held not
// ready: that answer is an error carrying the reason, since a status alone
// cannot say why, and a probe or zen health shows an error's text.
func (h *healthService) Check(
	ctx context.Context, req *healthpb.HealthCheckRequest,
) (*healthpb.HealthCheckResponse, error) {
	h.mu.Lock()
	reason := h.reasons[req.GetService()]
	h.mu.Unlock()
	select {
	case <-h.draining: // stopping says NOT_SERVING, whatever the reason was
	default:
		if reason != "" {
			return nil, grpcstatus.Error(codes.FailedPrecondition, reason)
		}
	}
	return h.Server.Check(ctx, req)
}

func newHealthService() *healthService {
	return &healthService{Server: health.NewServer(), draining: make(chan struct{})}
}

// drain reports NOT_SERVING for everything, so watchers hear it, then ends
// their streams. A client watching again reconnects elsewhere, or finds the
// server gone.
func (h *healthService) drain() {
	h.stopping.Store(true)
	h.Shutdown()
	h.once.Do(func() { close(h.draining) })
}

// Watch serves one watcher until its client leaves or the server drains.
func (h *healthService) Watch(req *healthpb.HealthCheckRequest, stream healthpb.Health_WatchServer) error {
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	go func() {
		select {
		case <-h.draining:
			cancel()
		case <-ctx.Done():
		}
	}()
	err := h.Server.Watch(req, &watchStream{Health_WatchServer: stream, ctx: ctx, stopping: &h.stopping})
	select {
	case <-h.draining:
		return grpcstatus.Error(codes.Unavailable, "the server is shutting down")
	default:
		return err
	}
}

// watchStream is a Watch stream whose context also ends on drain, and that
// gives no first answer once the server stops. A watcher there before
// hears NOT_SERVING; one that arrives while the server drains hears
// nothing, only the stream's end. It came looking for a replica that
// serves (the edge watching memory), and to it a first answer of
// NOT_SERVING says the role cannot serve, while only this replica is
// leaving: the watcher's next stream finds another.
type watchStream struct {
	healthpb.Health_WatchServer
	ctx      context.Context
	stopping *atomic.Bool
	answered bool
}

func (w *watchStream) Context() context.Context { return w.ctx }

func (w *watchStream) Send(resp *healthpb.HealthCheckResponse) error {
	if !w.answered && w.stopping.Load() {
		return grpcstatus.Error(codes.Unavailable, "the server is shutting down")
	}
	w.answered = true
	return w.Health_WatchServer.Send(resp)
}
