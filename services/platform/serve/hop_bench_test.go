package serve

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/childproc"
	"github.com/zenmcp/zen/services/platform/latency"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric/noop"
	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// hopServerEnv, set in the environment of a copy of this test binary, has
// it serve BenchmarkHopApart's echo instead of running tests (TestMain).
const hopServerEnv = "ZEN_SERVE_HOP_SERVER"

// hopAddrPrefix starts the line on which the echo server says where it
// listens.
const hopAddrPrefix = "addr="

// serveHops serves an echo behind the service-token check a role's port
// has, prints where it listens, and serves until the process is killed.
func serveHops() error {
	if err := telemetryAsZenRuns(); err != nil {
		return err
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	g := NewGRPC(testToken.ServerOptions()...)
	testgrpc.RegisterTestServiceServer(g, &fakeTest{
		unary: func(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
			return &testgrpc.SimpleResponse{Payload: req.GetPayload()}, nil
		},
	})
	fmt.Println(hopAddrPrefix + lis.Addr().String())
	return g.Serve(context.Background(), lis)
}

// BenchmarkHopApart times a unary call with 10 KiB each way between two
// processes, on zen's server and dial options with the service token, and
// telemetry as a role has it by default (trace ids, no spans recorded, no
// metrics): the least a hop between a cluster's roles costs here. With
// gap=2ms both processes are idle before each call, as a cluster's roles
// are while the others work on a call (one call at one caller takes about
// 3 ms, a role's part of it a few hundred microseconds); gap=0s calls back
// to back. What a gap adds is waking processes that went idle: on a
// virtual machine that halts an idle CPU at once, a wake-up it pays twice
// a hop.
//
//	go test -run '^$' -bench HopApart -benchtime 3000x ./services/platform/serve
func BenchmarkHopApart(b *testing.B) {
	client := testgrpc.NewTestServiceClient(dialHopServer(b))
	req := &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: make([]byte, 10<<10)}}
	call := func(b *testing.B) {
		if _, err := client.UnaryCall(context.Background(), req); err != nil {
			b.Fatalf("a call to the echo server (its stderr, if it said why, is above): %v", err)
		}
	}
	for range 200 { // the connection up, both processes warm
		call(b)
	}
	for _, gap := range []time.Duration{0, 2 * time.Millisecond} {
		b.Run(fmt.Sprint("gap=", gap), func(b *testing.B) {
			took := make([]time.Duration, 0, b.N)
			for range b.N {
				// The idle time is what is measured: there is nothing to
				// wait for. (Stopping the timer would read the memory
				// statistics, stopping the world, just before each call; ns/op
				// holds the gap.)
				time.Sleep(gap)
				t0 := time.Now()
				call(b)
				took = append(took, time.Since(t0))
			}
			latency.Report(b, took)
		})
	}
}

// dialHopServer starts a copy of this test binary serving the echo and
// dials it as a role dials another.
func dialHopServer(b *testing.B) *grpc.ClientConn {
	tp, mp, prop := otel.GetTracerProvider(), otel.GetMeterProvider(), otel.GetTextMapPropagator()
	b.Cleanup(func() { // TestMain's, for the tests
		otel.SetTracerProvider(tp)
		otel.SetMeterProvider(mp)
		otel.SetTextMapPropagator(prop)
	})
	if err := telemetryAsZenRuns(); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$") // the flag is a safeguard: TestMain answers first
	cmd.Env = append(os.Environ(), hopServerEnv+"=1")
	cmd.SysProcAttr = childproc.DiesWithParent()
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	addr := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(out).ReadString('\n')
		addr <- strings.TrimSpace(line)
	}()
	var line string
	select {
	case line = <-addr:
	case <-time.After(30 * time.Second):
		b.Fatal("the echo server said nothing for 30 s (its stderr, if it said why, is above)")
	}
	hostPort, ok := strings.CutPrefix(line, hopAddrPrefix)
	if _, _, err := net.SplitHostPort(hostPort); !ok || err != nil {
		b.Fatalf("the echo server said %q, not %s and the address it listens on (its stderr is above)", line,
			hopAddrPrefix)
	}
	conn, err := Dial(hostPort, testToken.DialOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = conn.Close() })
	return conn
}

// telemetryAsZenRuns sets the process's telemetry as a role's is with no
// OTEL_ or ZEN_METRICS_ADDR setting: trace ids only, metrics off. The echo
// server needs only the first (it starts before TestMain sets the tests'
// providers); the benchmark's side needs both, in place of the tests'.
func telemetryAsZenRuns() error {
	otel.SetMeterProvider(noop.NewMeterProvider())
	_, _, err := telemetry.Setup(context.Background(), "hop", "", func(string) string { return "" }, nil, nil)
	return err
}
