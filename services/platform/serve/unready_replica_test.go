package serve

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
)

// TestUnreadyReplicaGetsNoCalls: calls spread over every *ready*
// replica (issue 17). A memory replica that lost its store reports
// NOT_SERVING and answers Unavailable; the retries hide it only until the
// retry budget (20 tokens) is spent, and from then on about half the reads
// fail although the other replica serves. A fixed list (make cluster) has
// no readiness probe to take it out of DNS, so this lasts until the
// replica's store returns. The client must stop picking a replica whose
// health says NOT_SERVING (gRPC's client-side health checking:
// healthCheckConfig in the service config).
func TestUnreadyReplicaGetsNoCalls(t *testing.T) {
	t.Parallel()
	down := startReplica(t, func(context.Context, string) error {
		return grpcstatus.Error(codes.Unavailable, "memory: the store is unavailable; try again shortly")
	})
	down.g.SetStatus(false, fakeMemory) // what memory's store watch does
	up := startReplica(t, ok)
	up.g.SetServing(fakeMemory)
	conn := dialList(t, down, up)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	waitUntil(t, ctx, "the serving replica to get a call", func() bool {
		_ = callFake(ctx, conn, "GetThread")
		return up.calls.Load() > 0
	})
	failed := 0
	var last error
	for range 200 {
		if err := callFake(ctx, conn, "GetThread"); err != nil {
			failed++
			last = err
		}
	}
	if failed > 0 {
		t.Errorf("%d of 200 reads failed with one replica NOT_SERVING and the other serving; last: %v", failed, last)
	}
}

// TestNotReadyServiceStillGetsCalls: a service held not ready for want of
// configuration (the router without a model provider, GRPC.SetNotReady)
// leaves the server as a whole SERVING, so its callers still reach it: the
// edge gets the router's own answer, which says how to configure a
// provider, not a bare "no replica serves".
func TestNotReadyServiceStillGetsCalls(t *testing.T) {
	t.Parallel()
	held := startReplica(t, func(context.Context, string) error {
		return grpcstatus.Error(codes.FailedPrecondition, "no model provider is configured")
	})
	held.g.SetNotReady(fakeMemory, "no model provider is configured")
	conn := dialList(t, held)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err := callFake(ctx, conn, "GetThread")
	if grpcstatus.Code(err) != codes.FailedPrecondition || held.calls.Load() != 1 {
		t.Errorf("a call to a server whose one service is held not ready: %v after %d calls reached it; "+
			"want the server's own FailedPrecondition", err, held.calls.Load())
	}
}
