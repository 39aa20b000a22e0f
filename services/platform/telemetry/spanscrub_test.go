package telemetry

import (
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestSpansLeaveWithoutSecrets: a span's status, attributes and events
// leave the process scrubbed, as log lines do: a gRPC client span's status
// carried its error's message, and a provider request's span its URL,
// which may hold a key.
func TestSpansLeaveWithoutSecrets(t *testing.T) {
	t.Parallel()
	const secret = "sk-secret-0123456789"
	rec := tracetest.NewSpanRecorder()
	scrub := func(s string) string { return strings.ReplaceAll(s, secret, "[redacted]") }
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(ScrubSpans(rec, scrub)))
	_, span := tp.Tracer("t").Start(t.Context(), "call "+secret, trace.WithAttributes(
		attribute.String("url.full", "https://api.example/v1?key="+secret), attribute.Int("n", 3)),
		trace.WithLinks(trace.Link{Attributes: []attribute.KeyValue{attribute.String("why", secret)}}))
	span.AddEvent("retry", trace.WithAttributes(attribute.String("error", "401: "+secret)))
	span.SetStatus(codes.Error, "provider said: bad key "+secret)
	span.End()
	ended := rec.Ended()
	if len(ended) != 1 {
		t.Fatalf("%d spans ended, want 1", len(ended))
	}
	s := ended[0]
	seen := []string{s.Name(), s.Status().Description}
	for _, l := range s.Links() {
		for _, a := range l.Attributes {
			seen = append(seen, a.Value.String())
		}
	}
	for _, a := range s.Attributes() {
		seen = append(seen, a.Value.String())
	}
	for _, e := range s.Events() {
		for _, a := range e.Attributes {
			seen = append(seen, a.Value.String())
		}
	}
	for _, v := range seen {
		if strings.Contains(v, secret) {
			t.Errorf("a span left with the secret: %q", v)
		}
	}
	if s.Status().Code != codes.Error || len(s.Attributes()) != 2 || len(s.Events()) != 1 || len(s.Links()) != 1 {
		t.Errorf("the span lost more than its secret: %+v", s)
	}
}
