package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/edge/internal/call"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Each outcome is one line at its level; a failure carries its detail.
func TestLogCall(t *testing.T) {
	t.Parallel()
	sum := call.Summary{Model: "llama3.2", Provider: "custom", InputTokens: 3, OutputTokens: 4, ThreadID: "th"}
	unavailable := &call.BackendError{Role: "memory", Err: status.Error(codes.Unavailable, "memory is down")}
	req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{
		Meta: mcp.Meta{mcp.MetaKeyClientInfo: &mcp.Implementation{Name: "agent", Version: "1"}}}}
	base := map[string]any{"msg": "tool call", "tool": "chat", "model": "llama3.2", "provider": "custom",
		"input_tokens": 3.0, "output_tokens": 4.0, "thread_id": "th", "client": "agent 1", "duration_ms": 1500.0}
	with := func(extra map[string]any) map[string]any {
		m := map[string]any{}
		for _, src := range []map[string]any{base, extra} {
			for k, v := range src {
				m[k] = v
			}
		}
		return m
	}
	for _, tc := range []struct {
		name     string
		outcome  string
		failure  error
		clientID string
		want     map[string]any
	}{
		{name: "ok", outcome: outcomeOK, want: with(map[string]any{"level": "INFO", "outcome": "ok"})},
		{name: "a token's client", outcome: outcomeOK, clientID: "ann",
			want: with(map[string]any{"level": "INFO", "outcome": "ok", "client_id": "ann"})},
		{name: "cancelled", outcome: outcomeCancelled, failure: context.Canceled,
			want: with(map[string]any{"level": "INFO", "outcome": "cancelled"})},
		{name: "tool error", outcome: outcomeToolError,
			want: with(map[string]any{"level": "WARN", "outcome": "tool_error"})},
		{name: "a role failed", outcome: outcomeError, failure: unavailable,
			want: with(map[string]any{"level": "ERROR", "outcome": "error", "backend": "memory",
				"code": "Unavailable", "err": "memory is down"})},
		{name: "zen failed", outcome: outcomeError, failure: errors.New("a bug"),
			want: with(map[string]any{"level": "ERROR", "outcome": "error", "err": "a bug"})},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var buf bytes.Buffer
			ctx := context.Background()
			if tc.clientID != "" {
				ctx = auth.WithClient(ctx, tc.clientID)
			}
			logCall(ctx, telemetry.NewLogger(&buf, 0, nil), callRecord{tool: "chat", outcome: tc.outcome,
				took: 1500 * time.Millisecond, sum: sum, req: req, failure: tc.failure})
			var got map[string]any
			if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
				t.Fatalf("not one JSON line: %q", buf.String())
			}
			delete(got, "time")
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("line (-want +got):\n%s", diff)
			}
		})
	}
}

// TestLogCallCutsWhatClientsChoose: the model and the continuation a
// client names go into the line cut, as its name does: a megabyte of
// either was a megabyte a line.
func TestLogCallCutsWhatClientsChoose(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	long := strings.Repeat("N", 1<<20)
	logCall(context.Background(), telemetry.NewLogger(&buf, 0, nil), callRecord{tool: "chat", outcome: outcomeOK,
		sum: call.Summary{Model: long, ThreadID: long}})
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("not one JSON line: %.200q", buf.String())
	}
	for _, field := range []string{"model", "thread_id"} {
		if v, _ := got[field].(string); v != strings.Repeat("N", maxNameBytes)+"…" {
			t.Errorf("%s is logged as %d bytes, want it cut to %d", field, len(v), maxNameBytes)
		}
	}
}

// The client is named as it introduced itself, per request or at
// initialize.
func TestClientName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		meta mcp.Meta
		want string
	}{
		{"from the wire", mcp.Meta{mcp.MetaKeyClientInfo: map[string]any{"name": "claude-code", "version": "2.0.1"}},
			"claude-code 2.0.1"},
		{"in process", mcp.Meta{mcp.MetaKeyClientInfo: &mcp.Implementation{Name: "codex"}}, "codex"},
		{"unknown", nil, ""},
		// A client names itself: a megabyte of it would be a megabyte a line.
		{"too long", mcp.Meta{mcp.MetaKeyClientInfo: map[string]any{"name": strings.Repeat("N", 1<<20),
			"version": strings.Repeat("é", 100)}}, strings.Repeat("N", 128) + "… " + strings.Repeat("é", 64) + "…"},
	} {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Meta: tc.meta}}
		if got := clientName(req); got != tc.want {
			t.Errorf("%s: clientName = %q, want %q", tc.name, got, tc.want)
		}
	}
}
