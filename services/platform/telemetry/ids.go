package telemetry

import (
	"context"
	"encoding/binary"
	"math/rand/v2"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/embedded"
)

// idsOnly is the tracer provider of a process that exports no spans. Its
// spans record nothing, since nothing would read what they recorded, but
// carry what the SDK's would beyond the span: a trace id for logs and
// results, a span id of their own, and the decision of the SDK's default
// sampler (a new trace sampled, a continued one as its parent), so a hop
// that does export samples as before.
type idsOnly struct{ embedded.TracerProvider }

func (idsOnly) Tracer(string, ...trace.TracerOption) trace.Tracer { return idsTracer{} }

type idsTracer struct{ embedded.Tracer }

func (idsTracer) Start(ctx context.Context, _ string, opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	parent := trace.SpanContextFromContext(ctx)
	if len(opts) > 0 {
		if cfg := trace.NewSpanStartConfig(opts...); cfg.NewRoot() {
			parent = trace.SpanContext{}
		}
	}
	cfg := trace.SpanContextConfig{
		TraceID:    parent.TraceID(),
		SpanID:     newSpanID(),
		TraceFlags: parent.TraceFlags(),
		TraceState: parent.TraceState(),
	}
	if !parent.TraceID().IsValid() {
		cfg.TraceID, cfg.TraceFlags = newTraceID(), trace.FlagsSampled
	}
	span := &idsSpan{sc: trace.NewSpanContext(cfg)}
	return trace.ContextWithSpan(ctx, span), span
}

// newTraceID and newSpanID are random and never zero, which W3C reserves
// for no id.
func newTraceID() trace.TraceID {
	var id trace.TraceID
	for !id.IsValid() {
		binary.BigEndian.PutUint64(id[:8], rand.Uint64())
		binary.BigEndian.PutUint64(id[8:], rand.Uint64())
	}
	return id
}

func newSpanID() trace.SpanID {
	var id trace.SpanID
	for !id.IsValid() {
		binary.BigEndian.PutUint64(id[:], rand.Uint64())
	}
	return id
}

// idsSpan is a span that only names itself.
type idsSpan struct {
	embedded.Span
	sc trace.SpanContext
}

func (s *idsSpan) SpanContext() trace.SpanContext        { return s.sc }
func (*idsSpan) IsRecording() bool                       { return false }
func (*idsSpan) End(...trace.SpanEndOption)              {}
func (*idsSpan) AddEvent(string, ...trace.EventOption)   {}
func (*idsSpan) AddLink(trace.Link)                      {}
func (*idsSpan) RecordError(error, ...trace.EventOption) {}
func (*idsSpan) SetStatus(codes.Code, string)            {}
func (*idsSpan) SetName(string)                          {}
func (*idsSpan) SetAttributes(...attribute.KeyValue)     {}
func (*idsSpan) TracerProvider() trace.TracerProvider    { return idsOnly{} }
