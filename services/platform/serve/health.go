package serve

import (
	"context"
	"sync"

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
}

func newHealthService() *healthService {
	return &healthService{Server: health.NewServer(), draining: make(chan struct{})}
}

// drain reports NOT_SERVING for everything, so watchers hear it, then ends
// their streams. A client watching again reconnects elsewhere, or finds the
// server gone.
func (h *healthService) drain() {
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
	err := h.Server.Watch(req, &watchStream{Health_WatchServer: stream, ctx: ctx})
	select {
	case <-h.draining:
		return grpcstatus.Error(codes.Unavailable, "the server is shutting down")
	default:
		return err
	}
}

// watchStream is a Watch stream whose context also ends on drain.
type watchStream struct {
	healthpb.Health_WatchServer
	ctx context.Context
}

func (w *watchStream) Context() context.Context { return w.ctx }
