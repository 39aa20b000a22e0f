package telemetry

import (
	"context"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// TestSpansWithoutAnExporterCarryIDsOnly: with no exporter, a span records
// nothing (no one would read it) but still gives the call a trace id for
// logs and results, a span id of its own, and the sampling decision the
// SDK's default sampler would pass on to the next hop.
func TestSpansWithoutAnExporterCarryIDsOnly(t *testing.T) {
	tp, shutdown, err := Setup(t.Context(), "zen-test", "v0", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = shutdown(context.Background()) }()
	tracer := tp.Tracer("test")

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
	_, other := tracer.Start(t.Context(), "another root")
	if other.SpanContext().TraceID() == sc.TraceID() {
		t.Error("two roots share a trace id")
	}
	_, fresh := tracer.Start(ctx, "new root", trace.WithNewRoot())
	if fresh.SpanContext().TraceID() == sc.TraceID() {
		t.Error("WithNewRoot kept its parent's trace")
	}

	// A caller's unsampled trace stays unsampled past this process, and its
	// trace state goes on with it.
	state, err := trace.ParseTraceState("vendor=1")
	if err != nil {
		t.Fatal(err)
	}
	remote := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2},
		TraceState: state, Remote: true})
	_, span := tracer.Start(trace.ContextWithRemoteSpanContext(t.Context(), remote), "served")
	if c := span.SpanContext(); c.TraceID() != remote.TraceID() || c.IsSampled() || c.TraceState().String() != "vendor=1" ||
		c.IsRemote() {
		t.Errorf("under an unsampled remote parent: %+v", c)
	}
	span.SetAttributes()
	span.End()
}
