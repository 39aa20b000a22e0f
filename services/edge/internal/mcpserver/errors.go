package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/zenmcp/zen/services/edge/internal/call"
	"github.com/zenmcp/zen/services/edge/internal/streamhttp"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// codeRequestCancelled answers a call its client cancelled. MCP names no
// code for it; -32800 is the one JSON-RPC peers (LSP among them) use.
const codeRequestCancelled = -32800

// toRPCError is the one place a failed call becomes a JSON-RPC error. Tool
// errors the agent can act on never get here: they are results with
// IsError. What reaches here is the server's own trouble, worded without
// internal detail; the detail goes to the log with the trace id.
func toRPCError(ctx context.Context, logger *slog.Logger, tool string, err error) error {
	var unknown *call.UnknownToolError
	if errors.As(err, &unknown) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Unknown tool: %s", unknown.Name)}
	}
	if errors.Is(context.Cause(ctx), streamhttp.ErrClientCancelled) {
		// Over HTTP the reply still goes out on the call's stream: a
		// well-formed error, never an empty answer a client could take
		// for a broken session.
		return &jsonrpc.Error{Code: codeRequestCancelled, Message: "the client cancelled this call"}
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	trace := telemetry.TraceID(ctx)
	var be *call.BackendError
	if errors.As(err, &be) {
		st := status.Convert(be.Err)
		logger.ErrorContext(ctx, "tool call failed", "tool", tool, "role", be.Role, "code", st.Code().String(), "err", st.Message())
		switch st.Code() {
		case codes.Unavailable:
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
				"zen's %s service is unavailable right now; try again shortly (trace_id %s)", be.Role, trace)}
		case codes.DeadlineExceeded:
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
				"zen's %s service did not answer in time; try again (trace_id %s)", be.Role, trace)}
		}
	} else {
		logger.ErrorContext(ctx, "tool call failed", "tool", tool, "err", err)
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
		"zen hit an internal error running %s; the server log has details under trace_id %s", tool, trace)}
}
