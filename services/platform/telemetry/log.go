package telemetry

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/trace"
)

// ParseLevel reads LOG_LEVEL values (DEBUG, INFO, WARNING, ERROR and their
// lowercase forms). An empty value means INFO.
func ParseLevel(s string) (slog.Level, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "INFO":
		return slog.LevelInfo, nil
	case "DEBUG":
		return slog.LevelDebug, nil
	case "WARN", "WARNING":
		return slog.LevelWarn, nil
	case "ERROR", "CRITICAL":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("LOG_LEVEL=%q: want DEBUG, INFO, WARNING or ERROR", s)
}

// NewLogger writes JSON lines to w; every record logged with a context that
// holds a span carries its trace_id and span_id. scrub, when not nil,
// rewrites the text of every line (see ScrubHandler).
func NewLogger(w io.Writer, level slog.Level, scrub func(string) string) *slog.Logger {
	var h slog.Handler = traceHandler{slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level})}
	if scrub != nil {
		h = ScrubHandler(h, scrub)
	}
	return slog.New(h)
}

type traceHandler struct{ slog.Handler }

func (h traceHandler) Handle(ctx context.Context, r slog.Record) error {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		r.AddAttrs(slog.String("trace_id", sc.TraceID().String()), slog.String("span_id", sc.SpanID().String()))
	}
	return h.Handler.Handle(ctx, r)
}

func (h traceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return traceHandler{h.Handler.WithAttrs(attrs)}
}

func (h traceHandler) WithGroup(name string) slog.Handler {
	return traceHandler{h.Handler.WithGroup(name)}
}

// Demoted returns a logger that writes l's INFO records at DEBUG, keeping
// warnings and errors as they are: for a library whose routine chatter is
// INFO to it and detail to zen (the MCP SDK logs every session, which over
// stateless HTTP is every request).
func Demoted(l *slog.Logger) *slog.Logger { return slog.New(demoted{l.Handler()}) }

type demoted struct{ slog.Handler }

func (h demoted) Enabled(ctx context.Context, l slog.Level) bool {
	return h.Handler.Enabled(ctx, demote(l))
}

func (h demoted) Handle(ctx context.Context, r slog.Record) error {
	r.Level = demote(r.Level)
	return h.Handler.Handle(ctx, r)
}

func (h demoted) WithAttrs(attrs []slog.Attr) slog.Handler {
	return demoted{h.Handler.WithAttrs(attrs)}
}

func (h demoted) WithGroup(name string) slog.Handler { return demoted{h.Handler.WithGroup(name)} }

func demote(l slog.Level) slog.Level {
	if l >= slog.LevelDebug && l < slog.LevelWarn {
		return slog.LevelDebug
	}
	return l
}
