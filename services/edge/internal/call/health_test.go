package call

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// graceClock stands in for brokenGrace's timer: the grace of every verdict
// scheduled so far ends when the test says (expire), not after a sleep.
type graceClock struct {
	mu      sync.Mutex
	pending []func()
}

func (c *graceClock) after(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.pending = append(c.pending, f)
}

// expire ends the grace of every verdict scheduled so far.
func (c *graceClock) expire() {
	c.mu.Lock()
	due := c.pending
	c.pending = nil
	c.mu.Unlock()
	for _, f := range due {
		f()
	}
}

// TestHealthWatchVerdicts: what a call sees (Down) after each thing the
// watch hears. SERVING counts at once, and so does NOT_SERVING as a
// stream's first answer; a later NOT_SERVING, a broken stream and silence
// from the start count only once brokenGrace passes with nothing else
// heard.
func TestHealthWatchVerdicts(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		events []string // serving, not serving, broke, grace (brokenGrace passes)
		want   []bool   // Down after each event
	}{
		{"a replica drains and a new stream finds another",
			[]string{"serving", "not serving", "broke", "serving", "grace"}, []bool{false, false, false, false, false}},
		{"a replica dies and a new stream finds another",
			[]string{"serving", "broke", "serving", "grace"}, []bool{false, false, false, false}},
		{"the service says it can no longer serve", []string{"serving", "not serving", "grace"},
			[]bool{false, false, true}},
		{"the service is gone", []string{"serving", "not serving", "broke", "grace"}, []bool{false, false, false, true}},
		// A first answer comes from a replica that is not leaving.
		{"a new stream finds the service not serving either",
			[]string{"serving", "not serving", "broke", "not serving"}, []bool{false, false, false, true}},
		{"the service cannot serve from the start", []string{"not serving", "serving"}, []bool{true, false}},
		{"a first answer in time", []string{"serving", "grace"}, []bool{false, false}},
		// No replica serves, so the connection sends the watch to none.
		{"no answer at all", []string{"grace", "serving"}, []bool{true, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := &graceClock{}
			w := newHealthWatch(clock.after)
			var got []bool
			for _, e := range tc.events {
				switch e {
				case "serving", "not serving":
					w.heard(e == "serving")
				case "broke":
					w.broke()
				case "grace":
					clock.expire()
				}
				got = append(got, w.Down())
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Down after %v (-want +got):\n%s", tc.events, diff)
			}
		})
	}
}

// watchedReplica is one replica of memory's health service: it answers a
// Watch with SERVING and says which replica the stream is on.
type watchedReplica struct {
	healthpb.UnimplementedHealthServer
	id       int
	watching chan<- int
}

func (r *watchedReplica) Watch(req *healthpb.HealthCheckRequest, s healthpb.Health_WatchServer) error {
	if err := s.Send(&healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}); err != nil {
		return err
	}
	if req.GetService() == MemoryService { // not the connection's own health checks
		r.watching <- r.id
	}
	<-s.Context().Done()
	return nil
}

// TestHealthWatchOutlivesAReplica: memory's health stream runs on one of
// its replicas; when that replica dies, a call must not be refused as if
// memory were gone while another replica serves. Once every replica is
// gone, memory is down.
func TestHealthWatchOutlivesAReplica(t *testing.T) {
	t.Parallel()
	watching := make(chan int, 4)
	var servers []*grpc.Server
	var addrs []string
	for id := range 2 {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		s := grpc.NewServer()
		healthpb.RegisterHealthServer(s, &watchedReplica{id: id, watching: watching})
		go func() { _ = s.Serve(lis) }()
		t.Cleanup(s.Stop)
		servers = append(servers, s)
		addrs = append(addrs, lis.Addr().String())
	}
	w, clock, first := watchReplicas(t, addrs, watching)
	waitUntil(t, "the first stream's answer", func() bool { return w.heardSoFar() == 1 })

	// The replica holding the stream dies; the other serves on.
	servers[first].Stop()
	if other := recvWithin(t, watching, "a health stream on the other replica"); other < 0 || other == first {
		t.Fatalf("the new health stream is on replica %d; replica %d was stopped", other, first)
	}
	waitUntil(t, "the new stream's answer", func() bool { return w.heardSoFar() == 2 })
	clock.expire()
	if w.Down() {
		t.Fatalf("memory counted as down when one of its two replicas died")
	}

	// Both gone: memory is down.
	servers[1-first].Stop()
	waitUntil(t, "memory to count as down with every replica gone", func() bool {
		clock.expire()
		return w.Down()
	})
}

// watchReplicas dials memory's replicas at addrs as one target and watches
// memory's health there, as the edge does: it returns the watch, the clock
// its grace runs on, and the replica the first health stream landed on.
func watchReplicas(t *testing.T, addrs []string, watching <-chan int) (*HealthWatch, *graceClock, int) {
	t.Helper()
	conn, err := serve.Dial(strings.Join(addrs, ","))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	clock := &graceClock{}
	w := watchHealth(ctx, healthpb.NewHealthClient(conn), MemoryService, clock.after)
	first := recvWithin(t, watching, "the first health stream")
	if first < 0 {
		t.FailNow()
	}
	return w, clock, first
}

// heardSoFar is how many answers the watch has heard.
func (w *HealthWatch) heardSoFar() uint64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.answers
}

func recvWithin(t *testing.T, ch <-chan int, what string) int {
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Errorf("waited 10 s for %s", what)
		return -1
	}
}

// waitUntil polls cond until it holds, for up to 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("waited 10 s for %s", what)
		case <-tick.C:
		}
	}
}
