package serve

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	grpcstatus "google.golang.org/grpc/status"
)

// A client watching health (as the edge watches memory) must not hold a
// stopping server until its drain timeout.
func TestServeEndsHealthWatchesOnStop(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := NewGRPC()
	g.SetServing("zen.test.v1.TestService")
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, lis) }()

	conn, err := Dial(lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	watch, err := healthpb.NewHealthClient(conn).Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := watch.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first watch answer: %v, %v; want SERVING", resp, err)
	}

	stop()
	// Well under DrainTimeout (20 s), which is what a held stream costs.
	select {
	case err := <-served:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
	case <-time.After(DrainTimeout / 4):
		t.Fatalf("Serve still draining %v after stop, held by a health watch", DrainTimeout/4)
	}
	for {
		resp, err := watch.Recv()
		if err != nil {
			if grpcstatus.Code(err) != codes.Unavailable {
				t.Errorf("watch ended with %v, want Unavailable", err)
			}
			break
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_NOT_SERVING {
			t.Errorf("watch heard %v while stopping, want NOT_SERVING", resp.GetStatus())
		}
	}
}
