package telemetry

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/secrets"
)

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

type valuer struct{ s string }

func (v valuer) LogValue() slog.Value { return slog.StringValue(v.s) }

func TestLoggerScrubsSecrets(t *testing.T) {
	t.Parallel()
	const secret = "sk-secret-0123456789"
	scrub := secrets.New(secret)
	for _, c := range []struct {
		name string
		log  func(*slog.Logger)
	}{
		{"message", func(l *slog.Logger) { l.Info("key " + secret) }},
		{"string attribute", func(l *slog.Logger) { l.Info("m", "key", secret) }},
		{"error attribute", func(l *slog.Logger) {
			l.Error("m", "err", fmt.Errorf("dial: %w", errors.New("bad "+secret)))
		}},
		{"stringer", func(l *slog.Logger) { l.Info("m", "v", stringer{secret}) }},
		{"log valuer", func(l *slog.Logger) { l.Info("m", "v", valuer{secret}) }},
		{"group", func(l *slog.Logger) { l.Info("m", slog.Group("g", "inner", "x"+secret)) }},
		{"with attrs", func(l *slog.Logger) { l.With("key", secret).Info("m") }},
		{"with group then attrs", func(l *slog.Logger) {
			l.WithGroup("g").With("key", secret).Info("m", "k2", secret)
		}},
		{"map value", func(l *slog.Logger) { l.Info("m", "meta", map[string]any{"k": secret}) }},
		{"context", func(l *slog.Logger) { l.InfoContext(context.Background(), "m", "key", secret) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			c.log(NewLogger(&buf, slog.LevelInfo, scrub.String))
			out := buf.String()
			if strings.Contains(out, secret) || !strings.Contains(out, secrets.Redacted) {
				t.Errorf("log line not scrubbed: %s", out)
			}
		})
	}
}

func TestLoggerKeepsOtherValues(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := NewLogger(&buf, slog.LevelInfo, secrets.New("sk-secret-0123456789").String)
	logger.Info("tool done", "tool", "chat", "n", 3, "ok", true)
	want := `"msg":"tool done","tool":"chat","n":3,"ok":true}`
	if !strings.Contains(buf.String(), want) {
		t.Errorf("log line = %s, want it to contain %s", buf.String(), want)
	}
}

func TestLoggerWithoutScrubber(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	NewLogger(&buf, slog.LevelInfo, nil).Info("plain", "k", "v")
	if !strings.Contains(buf.String(), `"msg":"plain","k":"v"`) {
		t.Errorf("log line = %s", buf.String())
	}
}
