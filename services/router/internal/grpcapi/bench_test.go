package grpcapi_test

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/latency"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/dispatch"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"github.com/zenmcp/zen/services/router/internal/provider"
)

// routerOverTCP serves the router role as it runs in production: a traced
// gRPC server on a loopback port, the fake behind it.
func routerOverTCP(b *testing.B, fake *fakemodel.Server) routerv1.RouterServiceClient {
	reg := onlyProvider(b, "custom", "Custom API", fake)
	g := serve.NewGRPC()
	api := grpcapi.New(reg, dispatch.DefaultPolicy, slog.New(slog.DiscardHandler), telemetry.NewInstruments())
	routerv1.RegisterRouterServiceServer(g.Server, api)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { _ = g.Serve(ctx, lis) }()
	b.Cleanup(cancel)
	conn, err := serve.Dial(lis.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { conn.Close() })
	return routerv1.NewRouterServiceClient(conn)
}

var benchReq = &routerv1.GenerateRequest{Model: "llama3.2", SystemPrompt: "be brief",
	Messages: []*routerv1.Message{{Role: "user", Content: "How fast is the router?"}}}

// directReq is benchReq as the router sends it to the provider.
var directReq = provider.Request{Model: "llama3.2", Stream: true, Messages: []provider.Message{
	{Role: "system", Content: "be brief"}, {Role: "user", Content: "How fast is the router?"}}}

// productionTelemetry installs what the router role runs with: spans
// that carry their ids (telemetry.Setup, no exporter) and, as with
// ZEN_METRICS_ADDR, metrics read by the Prometheus registry. Without them
// otel's globals are no-ops and a benchmark would not see what telemetry
// costs.
var productionTelemetry = sync.OnceValue(func() error {
	noEnv := func(string) string { return "" }
	if _, _, err := telemetry.Setup(context.Background(), "zen-router", "bench", noEnv, nil, nil); err != nil {
		return err
	}
	_, err := telemetry.SetupMetrics("zen-router", "bench")
	return err
})

func withProductionTelemetry(b *testing.B) {
	if err := productionTelemetry(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkRouterOverhead compares a streaming generate through the router
// (gRPC on loopback, retries, tracing) with the same call made straight to
// the fake by the provider client. cpu-ms/call is the whole process's CPU
// (caller, router and fake): the router's own is the difference between
// direct and router. other-cpu-ms/call is the rest of the machine's: a run
// where it is not near zero shared the cores.
//
// What the router adds to a call's latency is paired's added-p50-ms: a
// direct call and a routed one in turn, each first every other time, so
// that both see the machine as it is at that moment. On a machine whose
// speed drifts, the p50s of direct and router, taken seconds apart,
// differ by more than the router adds. paired's ns/op is a pair's.
//
//	go test -run '^$' -bench RouterOverhead -benchtime 3000x ./services/router/internal/grpcapi
func BenchmarkRouterOverhead(b *testing.B) {
	withProductionTelemetry(b)
	fake := fakemodel.New(b)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "zero latency reply"} })
	b.Run("direct", func(b *testing.B) {
		call := directCall(b, fake)
		measure(b, func() { call() })
	})
	b.Run("router", func(b *testing.B) {
		call := routedCall(b, fake)
		measure(b, func() { call() })
	})
	b.Run("paired", func(b *testing.B) {
		direct, routed := directCall(b, fake), routedCall(b, fake)
		for range 50 {
			direct()
			routed()
		}
		d, r := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := range b.N {
			if i%2 == 0 {
				d = append(d, direct())
				r = append(r, routed())
			} else {
				r = append(r, routed())
				d = append(d, direct())
			}
		}
		b.StopTimer()
		latency.ReportAdded(b, d, r)
	})
}

// directCall returns a call straight to the fake by the provider client,
// which reports how long it took.
func directCall(b *testing.B, fake *fakemodel.Server) func() time.Duration {
	c := provider.NewCompat("Custom API", fake.URL(), "k", provider.NewHTTPClient(5*time.Second))
	return func() time.Duration {
		start := time.Now()
		if _, err := c.Generate(context.Background(), directReq, nil); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
}

// routedCall returns a call through the router role, which reports how
// long it took.
func routedCall(b *testing.B, fake *fakemodel.Server) func() time.Duration {
	c := routerOverTCP(b, fake)
	return func() time.Duration {
		start := time.Now()
		if _, _, err := generate(context.Background(), c, benchReq); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
}

// measure warms up, then times b.N calls of fn one after another and
// reports their percentiles and CPU per call.
func measure(b *testing.B, fn func()) {
	for range 50 {
		fn()
	}
	cpu := latency.StartCPU(b)
	latency.Measure(b, 0, fn)
	cpu.Report(b, b.N)
}

// callers is how many calls BenchmarkRouterThroughput keeps in flight.
const callers = 64

// BenchmarkRouterThroughput drives the router role with 64 concurrent
// callers, and the provider client straight to the fake ("direct") for
// the part of the CPU that is not the router's.
//
//	go test -run '^$' -bench RouterThroughput -benchtime 5s ./services/router/internal/grpcapi
func BenchmarkRouterThroughput(b *testing.B) {
	withProductionTelemetry(b)
	fake := fakemodel.New(b)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "zero latency reply"} })
	b.Run("direct", func(b *testing.B) {
		call := directCall(b, fake)
		throughput(b, func() { call() })
	})
	b.Run("router", func(b *testing.B) {
		call := routedCall(b, fake)
		throughput(b, func() { call() })
	})
}

// throughput runs fn b.N times from 64 goroutines and reports calls/s and
// CPU per call.
func throughput(b *testing.B, fn func()) {
	b.SetParallelism(max(1, callers/runtime.GOMAXPROCS(0)))
	cpu := latency.StartCPU(b)
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			fn()
		}
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
	cpu.Report(b, b.N)
}
