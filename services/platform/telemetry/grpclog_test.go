package telemetry

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestGRPCLinesAreZensLines: what gRPC and grpc-gateway log comes out as
// zen's JSON lines, errors as warnings and the rest at DEBUG, and nothing
// before the process has its logger.
func TestGRPCLinesAreZensLines(t *testing.T) {
	t.Parallel()
	g := &GRPCLog{}                                         // not installed: gRPC's logger is the process's, and tests share it
	g.Errorf("Failed to write response: %v", "i/o timeout") // no logger yet: dropped
	var out bytes.Buffer
	g.Use(NewLogger(&out, slog.LevelInfo, nil))
	g.Errorf("Failed to write response: %v", "i/o timeout")
	g.Infof("chatter %d", 1)
	g.Warning("detail")
	var got []map[string]any
	for line := range bytes.Lines(out.Bytes()) {
		var m map[string]any
		if err := json.Unmarshal(line, &m); err != nil {
			t.Fatalf("not a JSON line: %q", line)
		}
		delete(m, "time")
		got = append(got, m)
	}
	want := []map[string]any{{"level": "WARN", "msg": "Failed to write response: i/o timeout", "component": "grpc"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
