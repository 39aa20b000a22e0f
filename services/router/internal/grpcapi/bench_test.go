package grpcapi_test

import (
	"context"
	"log/slog"
	"net"
	"runtime"
	"testing"
	"time"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/latency"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/dispatch"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
)

// routerOverTCP serves the router role as it runs in production: a traced
// gRPC server on a loopback port, the fake behind it.
func routerOverTCP(b *testing.B, fake *fakemodel.Server) routerv1.RouterServiceClient {
	custom, _ := catalogue.Embedded("custom")
	reg, err := routing.New([]*routing.Provider{{Name: "custom", Label: "Custom API", Configured: true, Models: custom,
		Client: provider.NewCompat("Custom API", fake.URL(), "k", provider.NewHTTPClient(5*time.Second))}}, "auto")
	if err != nil {
		b.Fatal(err)
	}
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

// BenchmarkRouterOverhead compares a streaming generate through the router
// (gRPC on loopback, retries, tracing) with the same call made straight to
// the fake by the provider client. The difference is the router's cost.
//
//	go test -run '^$' -bench RouterOverhead -benchtime 3000x ./services/router/internal/grpcapi
func BenchmarkRouterOverhead(b *testing.B) {
	fake := fakemodel.New(b)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "zero latency reply"} })
	b.Run("direct", func(b *testing.B) {
		c := provider.NewCompat("Custom API", fake.URL(), "k", provider.NewHTTPClient(5*time.Second))
		req := provider.Request{Model: "llama3.2", Stream: true, Messages: []provider.Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "How fast is the router?"}}}
		latency.Measure(b, 50, func() {
			if _, err := c.Generate(context.Background(), req, nil); err != nil {
				b.Fatal(err)
			}
		})
	})
	b.Run("router", func(b *testing.B) {
		c := routerOverTCP(b, fake)
		latency.Measure(b, 50, func() {
			if _, _, err := generate(context.Background(), c, benchReq); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkRouterThroughput drives the router role with 64 concurrent
// callers.
//
//	go test -run '^$' -bench RouterThroughput -benchtime 5s ./services/router/internal/grpcapi
func BenchmarkRouterThroughput(b *testing.B) {
	fake := fakemodel.New(b)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "zero latency reply"} })
	c := routerOverTCP(b, fake)
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	start := time.Now()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := generate(context.Background(), c, benchReq); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "calls/s")
}
