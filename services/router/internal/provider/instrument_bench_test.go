package provider

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/propagation"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// answered is a provider that answers at once, without a network, so the
// benchmark below times the instrumentation alone.
type answered struct{}

func (answered) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
	}
	return &http.Response{StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: http.Header{}, Body: io.NopCloser(strings.NewReader("data: [DONE]\n\n")), Request: r}, nil
}

// BenchmarkProviderTelemetry times the span and metrics of one provider
// request, as otelhttp records them and as traced does, with spans recorded
// and metrics read as the router role has them.
//
//	go test -run '^$' -bench ProviderTelemetry -benchmem ./services/router/internal/provider
func BenchmarkProviderTelemetry(b *testing.B) {
	tp := sdktrace.NewTracerProvider()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	ctx, parent := tp.Tracer("bench").Start(context.Background(), "generate")
	defer parent.End()
	prop := propagation.TraceContext{}
	for _, tc := range []struct {
		name string
		rt   http.RoundTripper
	}{
		{"otelhttp", otelhttp.NewTransport(answered{}, otelhttp.WithMeterProvider(mp), otelhttp.WithPropagators(prop),
			otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string { return "provider " + r.URL.Path }))},
		{"zen", newTraced(answered{}, mp, prop)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequestWithContext(ctx, http.MethodPost, "https://api.example.com/v1/chat/completions",
					strings.NewReader(`{"model":"m","stream":true}`))
				resp, err := tc.rt.RoundTrip(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
		})
	}
}
