package telemetry

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// ScrubSpans passes every span that ends to next with scrub applied to its
// name, status, string attributes, and its events' and links' (zen sets no
// attribute of another kind that could hold text): spans
// leave the process as log lines do (ScrubHandler), and the code that sets
// an error's message on a span (a gRPC client's, the provider request's
// URL) cannot know what it quotes. The scrubbing runs when next reads the
// span (a batch exporter: off the call's path).
func ScrubSpans(next sdktrace.SpanProcessor, scrub func(string) string) sdktrace.SpanProcessor {
	return spanScrubber{next: next, scrub: scrub}
}

type spanScrubber struct {
	next  sdktrace.SpanProcessor
	scrub func(string) string
}

func (p spanScrubber) OnStart(ctx context.Context, s sdktrace.ReadWriteSpan) { p.next.OnStart(ctx, s) }
func (p spanScrubber) OnEnd(s sdktrace.ReadOnlySpan)                         { p.next.OnEnd(scrubbedSpan{s, p.scrub}) }
func (p spanScrubber) Shutdown(ctx context.Context) error                    { return p.next.Shutdown(ctx) }
func (p spanScrubber) ForceFlush(ctx context.Context) error                  { return p.next.ForceFlush(ctx) }

// scrubbedSpan is a span as it leaves: what it holds as text, scrubbed.
// Embedding the span keeps every method the SDK's interface asks for.
type scrubbedSpan struct {
	sdktrace.ReadOnlySpan
	scrub func(string) string
}

func (s scrubbedSpan) Status() sdktrace.Status {
	st := s.ReadOnlySpan.Status()
	st.Description = s.scrub(st.Description)
	return st
}

func (s scrubbedSpan) Name() string                     { return s.scrub(s.ReadOnlySpan.Name()) }
func (s scrubbedSpan) Attributes() []attribute.KeyValue { return s.attrs(s.ReadOnlySpan.Attributes()) }

func (s scrubbedSpan) Links() []sdktrace.Link {
	links := s.ReadOnlySpan.Links()
	out := make([]sdktrace.Link, len(links))
	for i, l := range links {
		l.Attributes = s.attrs(l.Attributes)
		out[i] = l
	}
	return out
}

func (s scrubbedSpan) Events() []sdktrace.Event {
	events := s.ReadOnlySpan.Events()
	out := make([]sdktrace.Event, len(events))
	for i, e := range events {
		e.Name, e.Attributes = s.scrub(e.Name), s.attrs(e.Attributes)
		out[i] = e
	}
	return out
}

// attrs is kvs with its string values scrubbed, in a copy.
func (s scrubbedSpan) attrs(kvs []attribute.KeyValue) []attribute.KeyValue {
	out := make([]attribute.KeyValue, len(kvs))
	for i, kv := range kvs {
		switch kv.Value.Type() {
		case attribute.STRING:
			kv.Value = attribute.StringValue(s.scrub(kv.Value.AsString()))
		case attribute.STRINGSLICE:
			vals := kv.Value.AsStringSlice()
			for j := range vals {
				vals[j] = s.scrub(vals[j])
			}
			kv.Value = attribute.StringSliceValue(vals)
		}
		out[i] = kv
	}
	return out
}
