package telemetry

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Demoted writes INFO at DEBUG, so at INFO it is silent, and keeps
// warnings and errors, with what With added.
func TestDemoted(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		level slog.Level
		want  []string // "LEVEL msg" of each line written
	}{
		{slog.LevelDebug, []string{"DEBUG debug", "DEBUG info", "WARN warn", "ERROR error"}},
		{slog.LevelInfo, []string{"WARN warn", "ERROR error"}},
		{slog.LevelError, []string{"ERROR error"}},
	} {
		t.Run(tc.level.String(), func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			l := Demoted(NewLogger(&buf, tc.level, nil)).With("lib", "sdk")
			l.Debug("debug")
			l.Info("info")
			l.Warn("warn")
			l.Error("error")
			var got []string
			for line := range strings.Lines(buf.String()) {
				var r struct{ Level, Msg, Lib string }
				if err := json.Unmarshal([]byte(line), &r); err != nil || r.Lib != "sdk" {
					t.Fatalf("line %q: %v", line, err)
				}
				got = append(got, r.Level+" "+r.Msg)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("lines at %v (-want +got):\n%s", tc.level, diff)
			}
		})
	}
}
