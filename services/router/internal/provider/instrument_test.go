package provider

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// seen is what a reader of traces and dashboards sees of provider calls.
type seen struct {
	Spans   []seenSpan
	Metrics []seenMetric
	// Propagated tells whether each request carried its client span's
	// context to the provider.
	Propagated []bool
}

type seenSpan struct {
	Name, Kind, Status, Scope string
	Attrs                     map[string]string
	HasParent                 bool
}

type seenMetric struct {
	Scope, Name, Unit, Description string
	Points                         []seenPoint
}

type seenPoint struct {
	Attrs map[string]string
	Count uint64
	Sum   int64 // body sizes only: durations differ from run to run
}

func attrMap(kvs []attribute.KeyValue) map[string]string {
	m := map[string]string{}
	for _, kv := range kvs {
		m[string(kv.Key)] = kv.Value.String()
	}
	return m
}

// observe makes calls through the transport wrap builds on base, and
// returns what its spans and metrics show.
func observe(t *testing.T, base http.RoundTripper,
	wrap func(http.RoundTripper, *sdkmetric.MeterProvider, propagation.TextMapPropagator) http.RoundTripper,
	calls func(context.Context, *http.Client), traceparents func() []string) seen {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	ctx, parent := tp.Tracer("test").Start(context.Background(), "call")
	calls(ctx, &http.Client{Transport: wrap(base, mp, propagation.TraceContext{})})
	parent.End()

	var out seen
	sent := traceparents()
	for _, s := range rec.Ended() {
		if s.Name() == "call" {
			continue
		}
		out.Spans = append(out.Spans, seenSpan{Name: s.Name(), Kind: s.SpanKind().String(),
			Status: s.Status().Code.String() + " " + s.Status().Description, Scope: s.InstrumentationScope().Name +
				" " + s.InstrumentationScope().Version, Attrs: attrMap(s.Attributes()), HasParent: s.Parent().IsValid()})
		found := false
		for _, tp := range sent {
			found = found || strings.Contains(tp, s.SpanContext().SpanID().String())
		}
		out.Propagated = append(out.Propagated, found)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			sm := seenMetric{Scope: sm.Scope.Name + " " + sm.Scope.Version, Name: m.Name, Unit: m.Unit,
				Description: m.Description}
			switch data := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range data.DataPoints {
					sm.Points = append(sm.Points, seenPoint{Attrs: attrMap(p.Attributes.ToSlice()), Count: p.Count})
				}
			case metricdata.Histogram[int64]:
				for _, p := range data.DataPoints {
					sm.Points = append(sm.Points, seenPoint{Attrs: attrMap(p.Attributes.ToSlice()), Count: p.Count,
						Sum: p.Sum})
				}
			default:
				t.Fatalf("metric %s: unexpected data %T", m.Name, m.Data)
			}
			sort.Slice(sm.Points, func(i, j int) bool {
				return fmt.Sprint(sm.Points[i].Attrs) < fmt.Sprint(sm.Points[j].Attrs)
			})
			out.Metrics = append(out.Metrics, sm)
		}
	}
	sort.Slice(out.Metrics, func(i, j int) bool { return out.Metrics[i].Name < out.Metrics[j].Name })
	return out
}

// closesRequest closes each request's body before it returns the
// response. otelhttp records a request's metrics once its body is closed,
// which the transport may do just after the response came; closed at once,
// every call is recorded by the time the test reads the metrics.
type closesRequest struct{ next http.RoundTripper }

func (t closesRequest) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if r.Body != nil {
		r.Body.Close()
	}
	return resp, err
}

// TestTracedMatchesOtelhttp: provider calls show the same spans, metrics
// and propagated context as otelhttp's transport gives them, for replies
// read whole or cut short, error statuses, failed connections, replies
// whose connection drops, and HTTP/2.
func TestTracedMatchesOtelhttp(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var traceparents []string
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		traceparents = append(traceparents, r.Header.Get("Traceparent"))
		mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/v1/missing":
			http.Error(w, "no such model", http.StatusNotFound)
		case "/v1/fail":
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
		case "/v1/drop": // the connection drops in the middle of the reply
			w.Header().Set("Content-Length", "100")
			_, _ = io.WriteString(w, "data: pie")
		default:
			w.Header().Set("Content-Type", "text/event-stream")
			for i := range 3 {
				_, _ = fmt.Fprintf(w, "data: piece %d\n\n", i)
				w.(http.Flusher).Flush()
			}
		}
	})
	plain := httptest.NewServer(handler)
	t.Cleanup(plain.Close)
	h2 := httptest.NewUnstartedServer(handler)
	h2.EnableHTTP2 = true
	h2.StartTLS()
	t.Cleanup(h2.Close)
	gone := httptest.NewServer(handler)
	gone.Close()

	tr := newTransport(HTTPOptions{Connect: 5 * time.Second})
	tr.TLSClientConfig = h2.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	base := closesRequest{tr}
	post := func(ctx context.Context, c *http.Client, url string, read func(io.Reader)) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"model":"m"}`))
		resp, err := c.Do(req)
		if err != nil {
			return
		}
		read(resp.Body)
		resp.Body.Close()
	}
	whole := func(r io.Reader) { _, _ = io.Copy(io.Discard, r) }
	part := func(r io.Reader) { _, _ = r.Read(make([]byte, 4)) }
	calls := func(ctx context.Context, c *http.Client) {
		post(ctx, c, plain.URL+"/v1/chat/completions", whole)
		post(ctx, c, plain.URL+"/v1/chat/completions", whole)
		post(ctx, c, plain.URL+"/v1/chat/completions", part)
		post(ctx, c, plain.URL+"/v1/missing", whole)
		post(ctx, c, plain.URL+"/v1/fail", whole)
		post(ctx, c, gone.URL+"/v1/chat/completions", whole)
		post(ctx, c, plain.URL+"/v1/drop", whole)
		post(ctx, c, h2.URL+"/v1/chat/completions", whole)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, plain.URL+"/v1/models", nil)
		if resp, err := c.Do(req); err == nil {
			whole(resp.Body)
			resp.Body.Close()
		}
	}
	sent := func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := traceparents
		traceparents = nil
		return out
	}

	want := observe(t, base, func(next http.RoundTripper, mp *sdkmetric.MeterProvider,
		prop propagation.TextMapPropagator) http.RoundTripper {
		return otelhttp.NewTransport(next, otelhttp.WithMeterProvider(mp), otelhttp.WithPropagators(prop),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
				return "provider " + r.Method + " " + r.URL.Path
			}))
	}, calls, sent)
	got := observe(t, base, func(next http.RoundTripper, mp *sdkmetric.MeterProvider,
		prop propagation.TextMapPropagator) http.RoundTripper {
		return newTraced(next, mp, prop)
	}, calls, sent)
	if len(want.Spans) != 9 || len(want.Metrics) != 2 {
		t.Fatalf("otelhttp recorded %d spans and %d metrics, want 9 and 2: %+v", len(want.Spans), len(want.Metrics), want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what a reader sees (-otelhttp +zen):\n%s", diff)
	}
}
