package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/edge/internal/call"
	"github.com/zenmcp/zen/services/edge/internal/streamhttp"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// codeRequestCancelled answers a call its client cancelled. MCP names no
// code for it; -32800 is the one JSON-RPC peers (LSP among them) use.
const codeRequestCancelled = -32800

// answer is what a client is told about a failed call. Every answer names
// the part that failed (one of zen's roles, the model's provider, or the
// message the client sent) and what the user can do about it.
type answer struct {
	// ToolError makes the answer a tool result with IsError, which the
	// agent reads and can act on (another model, another try); otherwise
	// it is a JSON-RPC error with Code.
	ToolError bool
	Code      int64
	Message   string
}

// describe is the one place a failed call becomes what its client sees.
// Tool errors the executor reports as results never get here. Internal
// detail stays out of the message; the log has it, under the trace id the
// message quotes.
func describe(ctx context.Context, tool string, err error) answer {
	var unknown *call.UnknownToolError
	if errors.As(err, &unknown) {
		return answer{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Unknown tool: %s", unknown.Name)}
	}
	if errors.Is(context.Cause(ctx), streamhttp.ErrClientCancelled) {
		// Over HTTP the reply still goes out on the call's stream: a
		// well-formed error, never an empty answer a client could take
		// for a broken session.
		return answer{Code: codeRequestCancelled, Message: "the client cancelled this call"}
	}
	trace := traceNote(ctx)
	if errors.Is(context.Cause(ctx), serve.ErrStopping) {
		// A tool error: the agent reads it, and trying again reaches a zen
		// that is up (another replica, or this one restarted).
		return answer{ToolError: true, Message: fmt.Sprintf("Error in %s: zen is stopping (a restart or a "+
			"deploy), and ended this call %s after the stop began (ZEN_DRAIN_TIMEOUT)%s. Try again in a "+
			"moment.", tool, serve.DrainTimeout, trace)}
	}
	var be *call.BackendError
	if !errors.As(err, &be) {
		return answer{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf(
			"zen hit an internal error running %s%s. Try again; if it keeps failing, report it with the server log's "+
				"details.", tool, trace)}
	}
	st := status.Convert(be.Err)
	reason, meta := origin.Of(be.Err)
	switch reason {
	case origin.RouterUnavailable:
		return roleFailure("router", codes.Unavailable, tool, trace)
	case origin.ProviderTimeout:
		return answer{ToolError: true, Message: fmt.Sprintf("Error in %s: the model's provider%s did not answer in "+
			"time (%s). The provider is slow or overloaded, not zen: try again, use a lower thinking_mode, or pick a "+
			"faster model (see listmodels).", tool, providerLabel(meta), st.Message())}
	case origin.ProviderUnavailable:
		return answer{ToolError: true, Message: fmt.Sprintf("Error in %s: %s. The model's provider%s failed, not "+
			"zen: try again in a minute, or pick another model (see listmodels).", tool, st.Message(),
			providerLabel(meta))}
	case origin.ProviderError:
		return answer{ToolError: true, Message: fmt.Sprintf("Error in %s: %s. The model's provider%s refused or "+
			"garbled this call, not zen: change the request if the message says what is wrong, or pick another "+
			"model (see listmodels).", tool, st.Message(), providerLabel(meta))}
	}
	if be.Role == "memory" && st.Code() == codes.ResourceExhausted && reason == "" {
		// Memory runs a few of a client's reads at once, and a bounded
		// weight of everyone's (its grpcapi's reads.go), and says so.
		return answer{ToolError: true, Message: fmt.Sprintf("Error in %s: zen's %s%s. This call was not run.", tool,
			st.Message(), trace)}
	}
	return roleFailure(be.Role, st.Code(), tool, trace)
}

// roleFailure words a failure of one of zen's own roles: memory, router or
// executor.
func roleFailure(role string, code codes.Code, tool, trace string) answer {
	var msg string
	switch {
	case code == codes.Unavailable && role == "memory":
		// A tool error, not a JSON-RPC one: agents show a JSON-RPC error as
		// little more than "tool failed", and this one the agent can act on.
		return answer{ToolError: true, Message: fmt.Sprintf("zen's memory service is unavailable right now%s, "+
			"so this call was not run: its answer could not be saved. Try again shortly; if it keeps failing, "+
			"check that zen's memory and its store (the SQLite file, or Redis) are up, and memory's log.", trace)}
	case code == codes.Unavailable:
		msg = fmt.Sprintf("zen's %s service is unavailable right now%s, so this call failed. Try again shortly; if "+
			"it keeps failing, check that zen's %s is running and reachable, and its log.", role, trace, role)
	case code == codes.DeadlineExceeded:
		msg = fmt.Sprintf("zen's %s service did not answer in time%s. Try again; if it keeps happening, check "+
			"the %s's log for what held it up.", role, trace, role)
	default:
		msg = fmt.Sprintf("zen's %s service failed running %s (an internal error)%s. Try again; if it keeps "+
			"failing, report it with the server log's details.", role, tool, trace)
	}
	return answer{Code: jsonrpc.CodeInternalError, Message: msg}
}

// failureReply answers a failed call: a tool error, or a JSON-RPC error.
// A cancelled or expired call stays a context error, which the SDK turns
// into its own reply. The failure's detail goes to the log in the call's
// one line (logCall).
func failureReply(ctx context.Context, tool string, err error, scrub func(string) string) (*mcp.CallToolResult, error) {
	a := describe(ctx, tool, err)
	if a.Code != codeRequestCancelled && !a.ToolError &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return nil, err
	}
	if a.ToolError {
		return result(call.Outcome{IsError: true, Reply: reply.Error(tool, scrub(a.Message))}), nil
	}
	return nil, &jsonrpc.Error{Code: a.Code, Message: a.Message}
}

// providerLabel names the provider a failure came from as the router
// labels it, " (Custom API)", when the failure says.
func providerLabel(meta map[string]string) string {
	if p := meta[origin.KeyProvider]; p != "" {
		return " (" + p + ")"
	}
	return ""
}

// traceNote quotes the trace id the log files the detail under.
func traceNote(ctx context.Context) string {
	if id := telemetry.TraceID(ctx); id != "" {
		return " (trace_id " + id + ")"
	}
	return ""
}
