package serve

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// Dependency is a gRPC service a role needs to do its work.
type Dependency struct {
	Name string // the role, for messages: "memory"
	Conn *grpc.ClientConn
}

// CheckAll asks each dependency's health service whether it serves, and
// returns an error naming the first that does not.
func CheckAll(ctx context.Context, deps []Dependency) error {
	for _, d := range deps {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		resp, err := healthpb.NewHealthClient(d.Conn).Check(cctx, &healthpb.HealthCheckRequest{})
		cancel()
		if err != nil {
			return fmt.Errorf("%s is unreachable at %s: %w", d.Name, d.Conn.Target(), err)
		}
		if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
			return fmt.Errorf("%s at %s is %s", d.Name, d.Conn.Target(), resp.GetStatus())
		}
	}
	return nil
}
