package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/edge/internal/call"
	"github.com/zenmcp/zen/services/edge/internal/streamhttp"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/cores"
	"github.com/zenmcp/zen/services/platform/modelrule"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/platform/textcut"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/types/known/structpb"
)

// Options configure the MCP server.
type Options struct {
	// Memory, when set, serves the zen://threads resources.
	Memory           memoryv1.MemoryServiceClient
	Name, Version    string
	Instructions     string         // see Instructions
	Models           modelrule.Mode // how calls get their model, for the slash commands
	Logger           *slog.Logger
	ProgressInterval time.Duration
	// Cores, when set, counts the calls in flight (cores.Governor).
	Cores *cores.Governor
}

// Server is zen's MCP server: the SDK's, and the handlers of its tools for
// transports that run a call without the SDK (fastcall).
type Server struct {
	*mcp.Server
	impl *mcp.Implementation
	// plain are the handlers of the tools the SDK calls with nothing but
	// the request.
	plain map[string]mcp.ToolHandler
}

// Implementation is what the server says it is, in the handshake and in
// the _meta of every result on the 2026-07-28 protocol.
func (s *Server) Implementation() *mcp.Implementation { return s.impl }

// PlainTool returns the handler the SDK would call for the named tool, for
// a tool whose schema binds no argument to a header (x-mcp-header, which
// the SDK checks against the request's headers first).
func (s *Server) PlainTool(name string) (mcp.ToolHandler, bool) {
	h, ok := s.plain[name]
	return h, ok
}

// New returns an MCP server offering tools, each run by runner.
func New(tools []*call.Tool, runner *call.Runner, o Options) *Server {
	impl := &mcp.Implementation{Name: o.Name, Version: o.Version}
	s := mcp.NewServer(impl, &mcp.ServerOptions{
		// The SDK logs each session at INFO: over stateless HTTP that is
		// every request, so its INFO is zen's DEBUG.
		Instructions: o.Instructions, Logger: telemetry.Demoted(o.Logger),
	})
	tracer := otel.Tracer("zen/edge")
	metrics := telemetry.NewInstruments()
	// Receiving middleware does not see the calls fastcall answers: one
	// that touches tools/call must make fastcall leave them to the SDK.
	s.AddReceivingMiddleware(fixedToolOrder(tools), unknownLongToolNames)
	if o.Memory != nil {
		addThreadResources(s, o.Memory)
	}
	addSlashCommands(s, tools, o.Models)
	plain := map[string]mcp.ToolHandler{}
	for _, t := range tools {
		tool := &mcp.Tool{
			Name: t.GetName(), Title: t.GetTitle(), Description: t.GetDescription(),
			InputSchema: wireSchema(t.GetInputSchema()),
			Annotations: &mcp.ToolAnnotations{Title: t.GetTitle(), ReadOnlyHint: t.GetReadOnly()},
		}
		if out := t.GetOutputSchema(); out != nil {
			tool.OutputSchema = wireSchema(out)
		}
		h := handler(t.GetName(), runner, tracer, metrics, o)
		if !bytes.Contains(tool.InputSchema.(json.RawMessage), []byte(`"x-mcp-header"`)) {
			plain[t.GetName()] = h
		}
		s.AddTool(tool, h)
	}
	return &Server{Server: s, impl: impl, plain: plain}
}

// wireSchema is a tool's schema encoded once, as the SDK would write it
// from a map (keys sorted, HTML not escaped). The SDK encodes a tool's
// input schema again on every call, to look for x-mcp-header annotations,
// and in every tools/list: raw JSON it copies, where a map it would walk
// and sort each time.
func wireSchema(s *structpb.Struct) json.RawMessage {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Only a number JSON cannot write (NaN, ±Inf) fails, and AddTool
	// panics on such a schema as well.
	if err := enc.Encode(s.AsMap()); err != nil {
		panic(fmt.Sprintf("mcpserver: a tool schema does not encode: %v", err))
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// Instructions words the handshake: what zen is, the model rule in
// modelrule's words, continuations, and, while no model provider is
// configured, where the agent learns how to add one.
func Instructions(mode modelrule.Mode, noProvider bool) string {
	s := "zen lets you consult other AI models. " + mode.Rule() +
		" Pass a returned continuation_id back to keep a conversation going, in any zen tool."
	if noProvider {
		s += " No model provider is configured yet: `listmodels` says how to add one."
	}
	return s
}

func handler(name string, runner *call.Runner, tracer trace.Tracer, metrics telemetry.Instruments, o Options) mcp.ToolHandler {
	// What names the tool's spans and measurements is made once, not per call.
	spanName := "tools/call " + name
	spanOptions := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer),
		trace.WithAttributes(attribute.String("mcp.tool", name))}
	measured := map[string]metric.MeasurementOption{}
	for _, outcome := range outcomes {
		measured[outcome] = metric.WithAttributeSet(attribute.NewSet(attribute.String("tool", name),
			attribute.String("outcome", outcome)))
	}
	return func(ctx context.Context, req *mcp.CallToolRequest) (res *mcp.CallToolResult, err error) {
		if o.Cores != nil {
			defer o.Cores.Begin()()
		}
		ctx = withCaller(contextFromMeta(ctx, req.Params.Meta), req.Extra)
		ctx, unlink := withLifetime(ctx)
		defer unlink()
		// Runs before unlink, so ctx still tells a cancelled call apart.
		started := time.Now()
		var out call.Outcome
		var failure error // the call's own error, before it is worded for the client
		defer func() {
			outcome := outcomeOK
			switch {
			case ctx.Err() != nil:
				outcome = outcomeCancelled
			case err != nil:
				outcome = outcomeError
			case res != nil && res.IsError:
				outcome = outcomeToolError
			}
			took := time.Since(started)
			attrs := measured[outcome]
			metrics.ToolCalls.Add(context.WithoutCancel(ctx), 1, attrs)
			metrics.ToolDuration.Record(context.WithoutCancel(ctx), took.Seconds(), attrs)
			rec := callRecord{tool: name, outcome: outcome, took: took, sum: out.Summary, req: req, failure: failure}
			DoAfterAnswer(ctx, func() { logCall(ctx, o.Logger, rec) })
		}()
		ctx, span := tracer.Start(ctx, spanName, spanOptions...)
		defer span.End()
		var progress func(string)
		if report := progressReporter(ctx, req); report != nil {
			hb := startHeartbeat(ctx, o.ProgressInterval, name, report)
			defer hb.stop()
			progress = hb.update
		}
		out, failure = runner.Run(ctx, name, req.Params.Arguments, progress)
		if failure != nil {
			// Scrubbed as it leaves (telemetry.ScrubSpans) too; here as well,
			// for a process that exports through a provider of its own.
			span.SetStatus(codes.Error, runner.Secrets.String(failure.Error()))
			return failureReply(ctx, name, failure, runner.Secrets.String)
		}
		if out.IsError {
			span.SetStatus(codes.Error, "tool error")
		}
		return result(out), nil
	}
}

// result renders an outcome: the reply's JSON as text, and the same bytes
// as structured content.
func result(out call.Outcome) *mcp.CallToolResult {
	text, err := out.Encoded()
	if err != nil {
		text = reply.Error(out.Reply.Metadata.ToolName, "zen could not encode the result").Encode()
	}
	return &mcp.CallToolResult{IsError: out.IsError, Content: []mcp.Content{&mcp.TextContent{Text: string(text)}},
		StructuredContent: json.RawMessage(text)}
}

// contextFromMeta continues a trace the client started, when its request
// carries W3C trace context in _meta (traceparent, tracestate, baggage).
func contextFromMeta(ctx context.Context, meta mcp.Meta) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	carrier := propagation.MapCarrier{}
	for _, k := range []string{"traceparent", "tracestate", "baggage"} {
		if v, ok := meta[k].(string); ok {
			carrier[k] = v
		}
	}
	if len(carrier) == 0 {
		return ctx
	}
	return otel.GetTextMapPropagator().Extract(ctx, carrier)
}

// fixedToolOrder lists tools in the executor's order (the reference's:
// chat first, listmodels and version last) instead of the SDK's
// alphabetical one, so the list is stable and familiar, which also helps
// clients cache it.
func fixedToolOrder(tools []*call.Tool) mcp.Middleware {
	rank := map[string]int{}
	for i, t := range tools {
		rank[t.GetName()] = i
	}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if list, ok := res.(*mcp.ListToolsResult); ok && err == nil && method == "tools/list" {
				slices.SortStableFunc(list.Tools, func(a, b *mcp.Tool) int { return rank[a.Name] - rank[b.Name] })
			}
			return res, err
		}
	}
}

// maxToolNameBytes is the longest tool name the SDK's own answer quotes
// whole: MCP's tool names have at most 128 characters.
const maxToolNameBytes = 128

// unknownLongToolNames answers a call of a tool whose name is longer than
// any tool's as the SDK answers an unknown tool, quoting the name's start:
// the SDK quotes it whole, and one of 4 MB made an error of 14 MB. Known
// tools are fastcall's, which it never sees.
func unknownLongToolNames(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil &&
			len(r.Params.Name) > maxToolNameBytes {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q… "+
				"(a name of %d bytes: MCP's tool names have at most %d characters)",
				textcut.Prefix(r.Params.Name, maxToolNameBytes), len(r.Params.Name), maxToolNameBytes)}
		}
		return next(ctx, method, req)
	}
}

// withCaller records the client a bearer token named, so every call to
// memory acts for that client alone.
func withCaller(ctx context.Context, extra *mcp.RequestExtra) context.Context {
	if extra != nil && extra.TokenInfo != nil && extra.TokenInfo.UserID != "" {
		return auth.WithClient(ctx, extra.TokenInfo.UserID)
	}
	return ctx
}

// withLifetime ends ctx when the HTTP call carrying it ends (the client
// dropped the connection or sent notifications/cancelled), which the SDK
// does not do itself for 2025-era stateless calls.
func withLifetime(ctx context.Context) (context.Context, func()) {
	life := streamhttp.Lifetime(ctx)
	if life == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(life, func() { cancel(context.Cause(life)) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}
