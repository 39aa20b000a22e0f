package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/serve"
)

// TestHealthReportsWhatTheServerSays: zen health asks a server about its
// health even when the server says it does not serve (a client's own
// health checking would refuse to call it at all), and prints what it
// says: NOT_SERVING for the server as a whole, and the reason a service is
// held not ready.
func TestHealthReportsWhatTheServerSays(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := serve.NewGRPC()
	g.SetStatus(false, "zen.memory.v1.MemoryService") // memory lost its store
	g.SetNotReady("zen.router.v1.RouterService", "no model provider is configured")
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, lis) }()
	t.Cleanup(func() {
		stop()
		<-served
	})
	addr := lis.Addr().String()
	noEnv := func(string) string { return "" }
	for _, tc := range []struct{ service, want string }{
		{"", addr + ": NOT_SERVING"},
		{"zen.router.v1.RouterService",
			addr + ": rpc error: code = FailedPrecondition desc = no model provider is configured"},
	} {
		args := []string{"--grpc", addr, "--service", tc.service}
		got := ""
		if err := runHealth(t.Context(), args, noEnv, io.Discard); err != nil {
			got = err.Error()
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("zen health %v (-want +got):\n%s", args, diff)
		}
	}
}

// TestBothListenersAnswerLivenessAlike: /healthz on the MCP listener
// answers as the gateway's does, {"status":"ok"} as JSON, as the README
// says of both; it answered "ok" in plain text.
func TestBothListenersAnswerLivenessAlike(t *testing.T) {
	t.Parallel()
	p := startZen(t, fakeEnv(fakemodel.New(t)), []string{"mcp", "gateway"}, serveArgs()...)
	for _, listener := range []string{"mcp", "gateway"} {
		res, err := http.Get("http://" + p.addr(listener) + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if got := res.Header.Get("Content-Type"); res.StatusCode != 200 || got != "application/json" ||
			string(body) != "{\"status\":\"ok\"}\n" {
			t.Errorf("%s /healthz: %d %s %q, want 200 application/json {\"status\":\"ok\"}", listener,
				res.StatusCode, got, body)
		}
	}
}
