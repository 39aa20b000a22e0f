package call

import (
	"context"
	"net"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// memoryWatchStream reports each Watch of memory's health (not the
// connection's own health checks, which ask about the whole server) as its
// request arrives.
type memoryWatchStream struct {
	grpc.ServerStream
	onWatch func()
}

func (s memoryWatchStream) RecvMsg(m any) error {
	err := s.ServerStream.RecvMsg(m)
	if req, ok := m.(*healthpb.HealthCheckRequest); ok && err == nil && req.GetService() == MemoryService {
		s.onWatch()
	}
	return err
}

// TestHealthWatchOutlivesAReplicaDraining: a memory replica that stops on
// SIGTERM (a rolling update, a scale-in) first tells its health watchers
// NOT_SERVING, then ends their streams. That is one replica leaving, not
// memory: while the other replica serves, the edge must not count memory
// as down (it would refuse every call that stores, and fail its own
// readiness) for even a moment. TestHealthWatchOutlivesAReplica covers a
// replica that dies without a word; this is the routine case.
func TestHealthWatchOutlivesAReplicaDraining(t *testing.T) {
	t.Parallel()
	type replica struct {
		stop    context.CancelFunc
		stopped chan error
	}
	watching := make(chan int, 64) // which replica each of memory's health streams lands on
	var gated atomic.Int64         // the replica whose streams wait for release before answering
	gated.Store(-1)
	release := make(chan struct{})
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) })
	var replicas []replica
	var addrs []string
	for id := range 2 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		onWatch := grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo,
			handler grpc.StreamHandler) error {
			return handler(srv, memoryWatchStream{ss, func() {
				watching <- id
				if gated.Load() == int64(id) {
					<-release
				}
			}})
		})
		g := serve.NewGRPC(onWatch)
		g.SetServing(MemoryService)
		ctx, cancel := context.WithCancel(context.Background())
		r := replica{stop: cancel, stopped: make(chan error, 1)}
		go func() { r.stopped <- g.Serve(ctx, lis) }()
		t.Cleanup(func() {
			releaseOnce.Do(func() { close(release) })
			cancel()
			<-r.stopped
		})
		replicas = append(replicas, r)
		addrs = append(addrs, lis.Addr().String())
	}
	w, clock, first := watchReplicas(t, addrs, watching)
	other := 1 - first
	gated.Store(int64(other))
	waitUntil(t, "the first stream's answer", func() bool { return w.heardSoFar() == 1 })

	// The replica holding the stream drains; the new stream reaches the
	// other, which holds its answer back until the test has looked.
	replicas[first].stop()
	for id := first; id != other; {
		if id = recvWithin(t, watching, "a health stream on the serving replica"); id < 0 {
			t.FailNow()
		}
	}
	if w.Down() {
		t.Fatalf("memory counted as down the moment replica %d drained, while replica %d served", first, other)
	}
	heard := w.heardSoFar()
	releaseOnce.Do(func() { close(release) })
	waitUntil(t, "the serving replica's answer", func() bool { return w.heardSoFar() > heard })
	clock.expire()
	if w.Down() {
		t.Fatalf("memory counted as down after replica %d drained, though replica %d answered SERVING", first, other)
	}

	// The other drains too: memory is down.
	replicas[other].stop()
	waitUntil(t, "memory to count as down with both replicas drained", func() bool {
		clock.expire()
		return w.Down()
	})
}
