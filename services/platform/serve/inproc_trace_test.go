package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// The package's tests trace and measure into these, through the global
// providers otelgrpc uses, as telemetry.Setup sets them in zen.
var (
	spans   = &spanRecorder{wanted: map[trace.TraceID]bool{}, changed: make(chan struct{})}
	metrics = sdkmetric.NewManualReader()
)

func TestMain(m *testing.M) {
	if os.Getenv(hopServerEnv) != "" { // BenchmarkHopApart's echo server, not a test run
		if err := serveHops(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans)))
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(metrics)))
	otel.SetTextMapPropagator(propagation.TraceContext{})
	os.Exit(m.Run())
}

// spanRecorder keeps the ended spans of the traces it is told to watch
// (not a benchmark's millions), and says when one ends.
type spanRecorder struct {
	mu      sync.Mutex
	wanted  map[trace.TraceID]bool
	ended   []sdktrace.ReadOnlySpan
	changed chan struct{} // closed and replaced as each span ends
}

func (r *spanRecorder) watch(id trace.TraceID) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.wanted[id] = true
}

func (r *spanRecorder) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (r *spanRecorder) Shutdown(context.Context) error                  { return nil }
func (r *spanRecorder) ForceFlush(context.Context) error                { return nil }

func (r *spanRecorder) OnEnd(s sdktrace.ReadOnlySpan) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.wanted[s.SpanContext().TraceID()] {
		return
	}
	r.ended = append(r.ended, s)
	close(r.changed)
	r.changed = make(chan struct{})
}

// trace waits until n spans of trace id have ended, and returns them. A
// server's span may end just after its client has its answer.
func (r *spanRecorder) trace(t *testing.T, id trace.TraceID, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		r.mu.Lock()
		var out []sdktrace.ReadOnlySpan
		for _, s := range r.ended {
			if s.SpanContext().TraceID() == id {
				out = append(out, s)
			}
		}
		changed := r.changed
		r.mu.Unlock()
		if len(out) >= n {
			return out
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("trace %s has %d spans, want %d", id, len(out), n)
		}
	}
}

// spanShape is a span as a trace viewer shows it.
type spanShape struct {
	Name, Kind, Parent, Status string
}

// tracedTest answers EmptyCall and CacheableUnaryCall, which no other
// test calls, so their metrics are this test's.
type tracedTest struct{ *fakeTest }

func (tracedTest) EmptyCall(context.Context, *testgrpc.Empty) (*testgrpc.Empty, error) {
	return &testgrpc.Empty{}, nil
}

func (tracedTest) CacheableUnaryCall(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return &testgrpc.SimpleResponse{}, nil
}

// An in-process call leaves the spans and metrics a call between processes
// does: a client span under the caller's, a server span under it, and a
// duration on each side.
func TestLocalTracesAsTheNetwork(t *testing.T) {
	t.Parallel()
	srv := tracedTest{&fakeTest{stream: func(_ *testgrpc.StreamingOutputCallRequest,
		s testgrpc.TestService_StreamingOutputCallServer) error {
		return s.Send(&testgrpc.StreamingOutputCallResponse{})
	}}}
	_, conns := bothWays(t, testToken, testToken, srv)
	got := map[string][]spanShape{}
	for name, conn := range conns {
		ctx, root := otel.Tracer("test").Start(t.Context(), "root")
		spans.watch(root.SpanContext().TraceID())
		client := testgrpc.NewTestServiceClient(conn)
		if _, err := client.EmptyCall(ctx, &testgrpc.Empty{}); err != nil {
			t.Fatal(err)
		}
		stream, err := client.StreamingOutputCall(ctx, &testgrpc.StreamingOutputCallRequest{})
		if err != nil {
			t.Fatal(err)
		}
		for err == nil {
			_, err = stream.Recv()
		}
		if !errors.Is(err, io.EOF) {
			t.Fatal(err)
		}
		root.End()
		got[name] = shapes(spans.trace(t, root.SpanContext().TraceID(), 5))
	}
	same(t, got)
	if len(got["local"]) != 5 {
		t.Errorf("local spans: %v", got["local"])
	}

	// An in-process unary call has recorded both durations by the time
	// it returns (over the network the server's may come later).
	const method = "grpc.testing.TestService/CacheableUnaryCall"
	before := map[string]uint64{}
	for _, side := range []string{"rpc.client.", "rpc.server."} {
		before[side] = calls(t, side, method)
	}
	_, err := testgrpc.NewTestServiceClient(conns["local"]).CacheableUnaryCall(t.Context(), &testgrpc.SimpleRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for side, n := range before {
		if got := calls(t, side, method) - n; got != 1 {
			t.Errorf("%s* durations of one in-process call: %d, want 1", side, got)
		}
	}
}

// shapes names each span's parent by its name and kind, and sorts them.
func shapes(ss []sdktrace.ReadOnlySpan) []spanShape {
	byID := map[trace.SpanID]sdktrace.ReadOnlySpan{}
	for _, s := range ss {
		byID[s.SpanContext().SpanID()] = s
	}
	var out []spanShape
	for _, s := range ss {
		parent := "none"
		if p, ok := byID[s.Parent().SpanID()]; ok {
			parent = p.Name() + " " + p.SpanKind().String()
		}
		out = append(out, spanShape{Name: s.Name(), Kind: s.SpanKind().String(), Parent: parent,
			Status: s.Status().Code.String()})
	}
	slices.SortFunc(out, func(a, b spanShape) int {
		return strings.Compare(a.Name+a.Kind, b.Name+b.Kind)
	})
	return out
}

// calls counts the durations recorded for method by instruments whose
// names start with prefix.
func calls(t *testing.T, prefix, method string) uint64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := metrics.Collect(t.Context(), &rm); err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !strings.HasPrefix(m.Name, prefix) || !ok {
				continue
			}
			for _, dp := range h.DataPoints {
				if v, ok := dp.Attributes.Value("rpc.method"); ok && v.AsString() == method {
					n += dp.Count
				}
			}
		}
	}
	return n
}
