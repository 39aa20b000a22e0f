package call

import (
	"context"
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
	down atomic.Bool
}

// WatchHealth follows service on client until ctx ends. Until the first
// answer the service counts as up; a broken stream counts as down until a
// new one reports otherwise.
func WatchHealth(ctx context.Context, client healthpb.HealthClient, service string) *HealthWatch {
	w := &HealthWatch{}
	go func() {
		backoff := 100 * time.Millisecond
		for ctx.Err() == nil {
			// WaitForReady: while memory is unreachable the watch waits for
			// the connection to come back, and answers the moment it does.
			stream, err := client.Watch(ctx, &healthpb.HealthCheckRequest{Service: service}, grpc.WaitForReady(true))
			for err == nil {
				var resp *healthpb.HealthCheckResponse
				if resp, err = stream.Recv(); err == nil {
					w.down.Store(resp.GetStatus() != healthpb.HealthCheckResponse_SERVING)
					backoff = 100 * time.Millisecond
				}
			}
			if ctx.Err() != nil {
				return
			}
			w.down.Store(true)
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
// not be reached.
func (w *HealthWatch) Down() bool { return w != nil && w.down.Load() }
