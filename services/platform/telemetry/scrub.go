package telemetry

import (
	"context"
	"fmt"
	"log/slog"
)

// ScrubHandler passes every record to h with scrub applied to its message
// and attribute values, including those added by With, inside groups, and
// the text of errors and other values. It is how secrets stay out of logs:
// an error from a provider or a CLI may quote a key, and the call that
// logs it cannot know.
func ScrubHandler(h slog.Handler, scrub func(string) string) slog.Handler {
	return scrubHandler{next: h, scrub: scrub}
}

type scrubHandler struct {
	next  slog.Handler
	scrub func(string) string
}

func (h scrubHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	clean := slog.NewRecord(r.Time, r.Level, h.scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		clean.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, clean)
}

func (h scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.attr(a)
	}
	return scrubHandler{next: h.next.WithAttrs(clean), scrub: h.scrub}
}

func (h scrubHandler) WithGroup(name string) slog.Handler {
	return scrubHandler{next: h.next.WithGroup(name), scrub: h.scrub}
}

// attr scrubs one attribute. Values other than strings and groups are
// kept as they are unless their text holds a secret; then the scrubbed
// text replaces them, since the handler would otherwise print the secret
// through Error, String or JSON encoding.
func (h scrubHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.scrub(v.String()))
	case slog.KindGroup:
		group := v.Group()
		clean := make([]slog.Attr, len(group))
		for i, g := range group {
			clean[i] = h.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(clean...)}
	case slog.KindAny:
		text := fmt.Sprintf("%+v", v.Any())
		if clean := h.scrub(text); clean != text {
			return slog.String(a.Key, clean)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
