package serve

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
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

// TestNotReadyKeepsTheServerAlive: a service held not ready fails its own
// check with the reason, while the server as a whole (what liveness and
// startup probes ask about) still serves; SetStatus releases it.
func TestNotReadyKeepsTheServerAlive(t *testing.T) {
	t.Parallel()
	g := NewGRPC()
	g.SetServing("zen.test.v1.Other")
	g.SetNotReady("zen.test.v1.Held", "no model provider is configured")
	conn, err := Dial(serveOnLoopback(t, g))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	check := func(service string) string {
		resp, err := healthpb.NewHealthClient(conn).Check(t.Context(), &healthpb.HealthCheckRequest{Service: service})
		if err != nil {
			return grpcstatus.Code(err).String() + ": " + grpcstatus.Convert(err).Message()
		}
		return resp.GetStatus().String()
	}
	got := map[string]string{"whole": check(""), "other": check("zen.test.v1.Other"), "held": check("zen.test.v1.Held")}
	want := map[string]string{"whole": "SERVING", "other": "SERVING",
		"held": "FailedPrecondition: no model provider is configured"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("health while held (-want +got):\n%s", diff)
	}
	g.SetStatus(true, "zen.test.v1.Held")
	if got := check("zen.test.v1.Held"); got != "SERVING" {
		t.Errorf("after SetStatus(true): %s, want SERVING", got)
	}
}

// TestADrainingServerTakesNoNewWatcher: once a server drains, a watcher
// already there hears NOT_SERVING, while a Watch that arrives then gets no
// answer at all, only the end of its stream. Its caller is another role's
// health watch looking for a replica that serves: to it, a first answer of
// NOT_SERVING means the role cannot serve (the edge refuses calls at once),
// which a replica on its way out must not say for the others.
func TestADrainingServerTakesNoNewWatcher(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := NewGRPC()
	g.SetServing("zen.test.v1.TestService")
	go func() { _ = g.Server.Serve(lis) }() // not Serve: no GOAWAY to refuse the new stream first
	t.Cleanup(g.Server.Stop)
	// A plain client: Dial's client-side health check would hear the drain
	// too and fail the new Watch at the picker before it reaches the server,
	// which is the property under test.
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// answers are what a watch heard until its stream ended.
	answers := func(watch healthpb.Health_WatchClient) []string {
		var heard []string
		for {
			resp, err := watch.Recv()
			if err != nil {
				return append(heard, grpcstatus.Code(err).String())
			}
			heard = append(heard, resp.GetStatus().String())
		}
	}
	watch := func() healthpb.Health_WatchClient {
		w, err := healthpb.NewHealthClient(conn).Watch(t.Context(),
			&healthpb.HealthCheckRequest{Service: "zen.test.v1.TestService"})
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	before := watch()
	if resp, err := before.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first answer: %v, %v; want SERVING", resp, err)
	}
	g.health.drain()
	if diff := cmp.Diff([]string{"NOT_SERVING", "Unavailable"}, answers(before)); diff != "" {
		t.Errorf("a watcher there before the drain heard (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"Unavailable"}, answers(watch())); diff != "" {
		t.Errorf("a watcher that came during the drain heard (-want +got):\n%s", diff)
	}
}
