package telemetry

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
)

// setup is Setup with env, putting the process's tracer provider and
// propagator back when the test ends.
func setup(t *testing.T, env map[string]string) trace.TracerProvider {
	t.Helper()
	tp, _ := setupLogged(t, env)
	return tp
}

// setupLogged is setup that also returns what Setup logged.
func setupLogged(t *testing.T, env map[string]string) (trace.TracerProvider, *bytes.Buffer) {
	t.Helper()
	var log bytes.Buffer
	tp0, prop0 := otel.GetTracerProvider(), otel.GetTextMapPropagator()
	tp, shutdown, err := Setup(t.Context(), "zen-test", "v0", func(k string) string { return env[k] },
		slog.New(slog.NewTextHandler(&log, nil)), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = shutdown(context.Background())
		otel.SetTracerProvider(tp0)
		otel.SetTextMapPropagator(prop0)
	})
	return tp, &log
}

// remoteParent is a caller's span, sampled or not, with a trace state.
func remoteParent(t *testing.T, sampled bool) context.Context {
	t.Helper()
	state, err := trace.ParseTraceState("vendor=1")
	if err != nil {
		t.Fatal(err)
	}
	cfg := trace.SpanContextConfig{
		TraceID:    trace.TraceID{1},
		SpanID:     trace.SpanID{2},
		TraceState: state,
		Remote:     true,
	}
	if sampled {
		cfg.TraceFlags = trace.FlagsSampled
	}
	return trace.ContextWithRemoteSpanContext(t.Context(), trace.NewSpanContext(cfg))
}

// TestSpansWithoutAnExporterCarryIDsOnly: with no exporter, a span records
// nothing (no one would read it) but still gives the call a trace id for
// logs and results, a span id of its own, and the sampling decision the
// SDK's default sampler would pass on to the next hop.
func TestSpansWithoutAnExporterCarryIDsOnly(t *testing.T) {
	tracer := setup(t, nil).Tracer("test")

	ctx, root := tracer.Start(t.Context(), "root")
	sc := root.SpanContext()
	if !sc.IsValid() || !sc.IsSampled() || root.IsRecording() {
		t.Fatalf("a root span: valid %v, sampled %v, recording %v; want valid, sampled, not recording",
			sc.IsValid(), sc.IsSampled(), root.IsRecording())
	}
	if TraceID(ctx) != sc.TraceID().String() {
		t.Errorf("TraceID(ctx) = %q, want the root's %s", TraceID(ctx), sc.TraceID())
	}
	// A library that starts its spans from the provider of the span it is
	// given (otelhttp, the router's transport) makes children as well.
	_, child := root.TracerProvider().Tracer("lib").Start(ctx, "child")
	if c := child.SpanContext(); c.TraceID() != sc.TraceID() || c.SpanID() == sc.SpanID() || !c.IsSampled() {
		t.Errorf("a child: trace %s (want %s), span %s (the root's is %s), sampled %v",
			c.TraceID(), sc.TraceID(), c.SpanID(), sc.SpanID(), c.IsSampled())
	}
	if _, other := tracer.Start(t.Context(), "another root"); other.SpanContext().TraceID() == sc.TraceID() {
		t.Error("two roots share a trace id")
	}

	for _, sampled := range []bool{false, true} {
		// A caller's trace goes on past this process as the caller sampled
		// it, with its trace state.
		parent := remoteParent(t, sampled)
		_, span := tracer.Start(parent, "served")
		c := span.SpanContext()
		if c.TraceID() != (trace.TraceID{1}) || c.IsSampled() != sampled || c.IsRemote() ||
			c.TraceState().String() != "vendor=1" {
			t.Errorf("under a remote parent, sampled %v: %+v", sampled, c)
		}
		// A new root starts a trace of its own, sampled, whatever its
		// parent was.
		_, fresh := tracer.Start(parent, "new root", trace.WithNewRoot())
		if f := fresh.SpanContext(); f.TraceID() == c.TraceID() || !f.IsSampled() || f.TraceState().Len() != 0 {
			t.Errorf("WithNewRoot under a parent sampled %v: %+v", sampled, f)
		}
	}
}

// TestASetSamplerStillDecides: a sampler named in OTEL_TRACES_SAMPLER
// (in the environment or a .env file: getenv, not the process's own
// environment, which the SDK would read) decides for the hops after a
// process that exports nothing.
func TestASetSamplerStillDecides(t *testing.T) {
	tp := setup(t, map[string]string{"OTEL_TRACES_SAMPLER": "Always_Off"})
	_, span := tp.Tracer("test").Start(t.Context(), "root")
	if c := span.SpanContext(); !c.IsValid() || c.IsSampled() {
		t.Errorf("with always_off: valid %v, sampled %v; want a valid, unsampled span", c.IsValid(), c.IsSampled())
	}
	if _, ok := setup(t, map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_always_on"}).(idsOnly); !ok {
		t.Error("the default sampler, named, did not give spans that carry ids only")
	}
}

// TestABadSamplerIsReportedAndIgnored: a sampler zen cannot make, or a
// ratio out of range, is logged and ignored, as OpenTelemetry asks (the
// variable may be set for every process of the machine): the default
// sampler decides, or every trace is sampled.
func TestABadSamplerIsReportedAndIgnored(t *testing.T) {
	cases := []struct {
		env  map[string]string
		warn string
	}{
		{map[string]string{"OTEL_TRACES_SAMPLER": "Jaeger_Remote"}, `OTEL_TRACES_SAMPLER names a sampler`},
		{map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "1.5"},
			`OTEL_TRACES_SAMPLER_ARG is not a share`},
		{map[string]string{"OTEL_TRACES_SAMPLER": "parentbased_traceidratio", "OTEL_TRACES_SAMPLER_ARG": "NaN"},
			`OTEL_TRACES_SAMPLER_ARG is not a share`},
	}
	for _, c := range cases {
		tp, log := setupLogged(t, c.env)
		if !strings.Contains(log.String(), c.warn) {
			t.Errorf("%v: logged %q, want %q", c.env, log.String(), c.warn)
		}
		if _, span := tp.Tracer("test").Start(t.Context(), "root"); !span.SpanContext().IsSampled() {
			t.Errorf("%v: a new trace was not sampled", c.env)
		}
	}
	tp, log := setupLogged(t, map[string]string{"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0"})
	if _, span := tp.Tracer("test").Start(t.Context(), "root"); span.SpanContext().IsSampled() || log.Len() > 0 {
		t.Errorf("a ratio of 0 sampled a trace, or logged %q", log.String())
	}
}
