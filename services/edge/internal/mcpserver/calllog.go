package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/edge/internal/call"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/textcut"
	"google.golang.org/grpc/status"
)

// Outcomes of a tool call, in its log line and its metrics.
const (
	outcomeOK        = "ok"
	outcomeToolError = "tool_error" // a result with isError: the agent can act on it
	outcomeError     = "error"      // a JSON-RPC error: zen or one of its roles failed
	outcomeCancelled = "cancelled"
)

// outcomes are every outcome a call can have.
var outcomes = []string{outcomeOK, outcomeToolError, outcomeError, outcomeCancelled}

// callRecord is what the log line of one tool call says.
type callRecord struct {
	tool    string
	outcome string
	took    time.Duration
	sum     call.Summary
	req     *mcp.CallToolRequest // for how the client introduced itself
	// failure is the call's own error, before it was worded for the client.
	failure error
}

// logCall writes the one line each tool call leaves in the log, under the
// call's trace id (the handler adds it from ctx): INFO when the call
// succeeded or its client cancelled it, WARN for a tool error, ERROR when
// zen failed. A failure's detail is on the same line. It is the only log
// call on a call's path, and costs one record.
func logCall(ctx context.Context, logger *slog.Logger, rec callRecord) {
	level := slog.LevelInfo
	switch rec.outcome {
	case outcomeToolError:
		level = slog.LevelWarn
	case outcomeError:
		level = slog.LevelError
	}
	if !logger.Enabled(ctx, level) {
		return
	}
	// The nine attributes every line has, and room for client_id and a
	// failure's detail (up to four), so the line allocates once.
	attrs := make([]slog.Attr, 0, 14)
	attrs = append(attrs,
		slog.String("tool", rec.tool),
		slog.String("outcome", rec.outcome),
		slog.String("model", shortName(rec.sum.Model)),
		slog.String("provider", rec.sum.Provider),
		slog.Float64("duration_ms", float64(rec.took.Microseconds())/1000),
		slog.Int64("input_tokens", rec.sum.InputTokens),
		slog.Int64("output_tokens", rec.sum.OutputTokens),
		slog.String("thread_id", shortName(rec.sum.ThreadID)),
		slog.String("client", clientName(rec.req)),
	)
	add := func(a slog.Attr) { attrs = append(attrs, a) }
	if id := auth.Client(ctx); id != "" {
		add(slog.String("client_id", id))
	}
	var be *call.BackendError
	switch {
	case rec.failure == nil || rec.outcome == outcomeCancelled:
	case errors.As(rec.failure, &be):
		reason, _ := origin.Of(be.Err)
		st := status.Convert(be.Err)
		add(slog.String("backend", be.Role)) // "role" names the role that logs
		if reason != "" {
			add(slog.String("origin", string(reason)))
		}
		add(slog.String("code", st.Code().String()))
		add(slog.String("err", st.Message()))
	default:
		add(slog.Any("err", rec.failure))
	}
	logger.LogAttrs(ctx, level, "tool call", attrs...)
}

// clientName is how the calling client introduced itself ("claude-code
// 2.0.1"): in the request's _meta (2026-era protocol), else at initialize.
func clientName(req *mcp.CallToolRequest) string {
	if req == nil || req.Params == nil {
		return ""
	}
	switch v := req.Params.Meta[mcp.MetaKeyClientInfo].(type) {
	case map[string]any: // as it came over the wire
		name, _ := v["name"].(string)
		version, _ := v["version"].(string)
		return nameVersion(name, version)
	case *mcp.Implementation:
		if v != nil {
			return nameVersion(v.Name, v.Version)
		}
	}
	if req.Session != nil {
		if p := req.Session.InitializeParams(); p != nil && p.ClientInfo != nil {
			return nameVersion(p.ClientInfo.Name, p.ClientInfo.Version)
		}
	}
	return ""
}

func nameVersion(name, version string) string {
	name, version = shortName(name), shortName(version)
	if version == "" {
		return name
	}
	return name + " " + version
}

// maxNameBytes bounds each value a client chose in the call's log line
// (its name and version, the model, the continuation): any length fits in
// a request.
const maxNameBytes = 128

// shortName is s cut to maxNameBytes, at a character's start, marked "…"
// when cut.
func shortName(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	return textcut.Prefix(s, maxNameBytes) + "…"
}
