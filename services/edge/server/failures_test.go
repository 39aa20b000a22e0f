package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"
)

// seen is what an MCP client sees of a failed call.
type seen struct {
	HTTPStatus int
	ToolError  bool   // a result with isError, for the agent to act on
	Code       int64  // the JSON-RPC error code, when not a tool error
	Message    string // the error's message, or the tool error's content
}

// TestEveryFailureNamesWhoFailedAndWhatToDo maps each way a call can fail
// to what its client is told: which part failed (one of zen's roles, the
// model's provider, the client's own message) and what the user can do.
// Failures travel as the roles send them over gRPC; a failure that came
// from beyond the role reporting it carries its origin (an ErrorInfo in
// domain "zen").
func TestEveryFailureNamesWhoFailedAndWhatToDo(t *testing.T) {
	t.Parallel()
	const (
		again    = "Try again shortly; if it keeps failing, check that zen's "
		provider = "the model's provider (Custom API)"
		models   = "pick another model (see listmodels)."
	)
	marked := func(code codes.Code, msg, reason string) error {
		st, err := status.New(code, msg).WithDetails(&errdetails.ErrorInfo{Domain: "zen", Reason: reason,
			Metadata: map[string]string{"provider": "Custom API", "model": "llama3.2"}})
		if err != nil {
			t.Fatal(err)
		}
		return st.Err()
	}
	chat := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":%q,` +
		`"model":"llama3.2"}}}`
	tests := []struct {
		name  string
		fakes fakeRoles
		body  string
		want  seen
	}{
		{"router down", fakeRoles{resolve: status.Error(codes.Unavailable, "connection refused")}, "",
			seen{200, false, -32603, "zen's router service is unavailable right now, so this call failed. " + again +
				"router is running and reachable, and its log."}},
		{"router died during the call", fakeRoles{execute: marked(codes.Unavailable,
			"the executor could not reach zen's router: error reading from server: EOF", "ROUTER_UNAVAILABLE")}, "",
			seen{200, false, -32603, "zen's router service is unavailable right now, so this call failed. " + again +
				"router is running and reachable, and its log."}},
		{"memory busy with the client's other calls", fakeRoles{prepare: status.Error(codes.ResourceExhausted,
			"memory has run 8 calls' prepares for this client (every caller, without tokens) for 10s, and has none "+
				"free: try again once one has ended")}, "",
			seen{200, true, 0, "Error in chat: zen's memory has run 8 calls' prepares for this client (every caller, " +
				"without tokens) for 10s, and has none free: try again once one has ended. This call was not run."}},
		{"executor down", fakeRoles{execute: status.Error(codes.Unavailable, "connection refused")}, "",
			seen{200, false, -32603, "zen's executor service is unavailable right now, so this call failed. " + again +
				"executor is running and reachable, and its log."}},
		{"executor too slow", fakeRoles{execute: status.Error(codes.DeadlineExceeded, "deadline exceeded")}, "",
			seen{200, false, -32603, "zen's executor service did not answer in time. Try again; if it keeps " +
				"happening, check the executor's log for what held it up."}},
		{"executor bug", fakeRoles{execute: status.Error(codes.Internal, "executor: internal error")}, "",
			seen{200, false, -32603, "zen's executor service failed running chat (an internal error). Try again; " +
				"if it keeps failing, report it with the server log's details."}},
		{"memory down", fakeRoles{memoryDown: true}, "",
			seen{200, true, 0, "zen's memory service is unavailable right now, so this call was not run: its " +
				"answer could not be saved. Try again shortly; if it keeps failing, check that zen's memory and its " +
				"store (the SQLite file, or Redis) are up, and memory's log."}},
		{"provider timeout", fakeRoles{execute: marked(codes.DeadlineExceeded,
			"the model call ran out of time: context deadline exceeded", "PROVIDER_TIMEOUT")}, "",
			seen{200, true, 0, "Error in chat: " + provider + " did not answer in time (the model call ran out of " +
				"time: context deadline exceeded). The provider is slow or overloaded, not zen: try again, use a " +
				"lower thinking_mode, or pick a faster model (see listmodels)."}},
		{"provider 5xx", fakeRoles{execute: marked(codes.Unavailable,
			"Custom API error for model llama3.2: HTTP 502: bad gateway after 4 attempt(s)",
			"PROVIDER_UNAVAILABLE")}, "", seen{200, true, 0,
			"Error in chat: Custom API error for model llama3.2: HTTP 502: bad gateway " +
				"after 4 attempt(s). The model's provider (Custom API) failed, not zen: try again in a minute, or " +
				models}},
		{"provider refused the call", fakeRoles{execute: marked(codes.FailedPrecondition,
			"Custom API error for model llama3.2: HTTP 400: context too long after 1 attempt(s)",
			"PROVIDER_ERROR")}, "", seen{200, true, 0,
			"Error in chat: Custom API error for model llama3.2: HTTP 400: context too " +
				"long after 1 attempt(s). The model's provider (Custom API) refused or garbled this call, not zen: " +
				"change the request if the message says what is wrong, or " + models}},
		{"no provider configured", fakeRoles{resolve: marked(codes.FailedPrecondition,
			"no model provider is configured: set CUSTOM_API_URL in zen's environment, then restart zen",
			"NO_PROVIDER")}, "", seen{200, true, 0, "Error in chat: no model provider is configured: set " +
			"CUSTOM_API_URL in zen's environment, then restart zen."}},
		// Only the router's mark says no provider is configured: another
		// refusal is the router's failure, not setup help.
		{"router refused otherwise", fakeRoles{resolve: status.Error(codes.FailedPrecondition, "catalogue not loaded")},
			"", seen{200, false, -32603, "zen's router service failed running chat (an internal error). Try again; " +
				"if it keeps failing, report it with the server log's details."}},
		{"unknown tool", fakeRoles{}, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"nope"}}`,
			seen{200, false, -32602, `unknown tool "nope"`}}, // the SDK's own answer
		{"body too large", fakeRoles{}, fmt.Sprintf(chat, strings.Repeat("x", 5<<20)),
			seen{413, false, -32600, "zen refused this message: it is 5.0 MiB, over the 4 MiB limit for one MCP " +
				"message. Send large text as a file instead: save it and pass its absolute path (a long prompt as " +
				"prompt.txt in absolute_file_paths), and images as file paths rather than data URLs."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			body := tt.body
			if body == "" {
				body = fmt.Sprintf(chat, "hello")
			}
			got := post(t, edgeOver(t, &tt.fakes), body)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("what the client sees (-want +got):\n%s", diff)
			}
		})
	}
}

// fakeRoles are memory, router and executor, each failing as told.
type fakeRoles struct {
	memoryv1.UnimplementedMemoryServiceServer
	routerv1.UnimplementedRouterServiceServer
	executorv1.UnimplementedExecutorServiceServer
	resolve, execute error
	// prepare, when set, is memory's answer to every PrepareCall.
	prepare error
	// memoryDown makes memory's health say it cannot store.
	memoryDown bool
	// tools, when set, are the executor's tools instead of one chat tool;
	// result, when set, is its answer to every call.
	tools  []*executorv1.Tool
	result *executorv1.ToolResult
	// progress are what the executor says of a call before its result.
	progress []string
	// hold, when set, keeps every call waiting after its progress until
	// it is closed.
	hold chan struct{}
}

func (f *fakeRoles) ListTools(context.Context, *executorv1.ListToolsRequest) (*executorv1.ListToolsResponse, error) {
	if f.tools != nil {
		return &executorv1.ListToolsResponse{Tools: f.tools}, nil
	}
	schema, err := structpb.NewStruct(map[string]any{"type": "object", "required": []any{"prompt"},
		"properties": map[string]any{
			"prompt": map[string]any{"type": "string"},
			"model":  map[string]any{"type": "string"},
		}})
	if err != nil {
		return nil, err
	}
	return &executorv1.ListToolsResponse{Tools: []*executorv1.Tool{{Name: "chat", InputSchema: schema,
		RequiresModel: true, Category: "FAST_RESPONSE"}}}, nil
}

func (f *fakeRoles) ListModels(context.Context, *routerv1.ListModelsRequest) (*routerv1.ListModelsResponse, error) {
	return &routerv1.ListModelsResponse{DefaultModel: "llama3.2"}, nil
}

func (f *fakeRoles) ResolveModel(context.Context,
	*routerv1.ResolveModelRequest) (*routerv1.ResolveModelResponse, error) {
	if f.resolve != nil {
		return nil, f.resolve
	}
	return &routerv1.ResolveModelResponse{Model: &routerv1.Model{Name: "llama3.2", Provider: "custom",
		ContextWindow: 128_000}}, nil
}

func (f *fakeRoles) GetSettings(context.Context, *memoryv1.GetSettingsRequest) (*memoryv1.GetSettingsResponse, error) {
	return &memoryv1.GetSettingsResponse{MaxTurns: 50, TtlSeconds: 3600}, nil
}

func (f *fakeRoles) PrepareCall(context.Context, *memoryv1.PrepareCallRequest) (*memoryv1.PrepareCallResponse, error) {
	if f.prepare != nil {
		return nil, f.prepare
	}
	return &memoryv1.PrepareCallResponse{Limits: &memoryv1.Limits{MaxTurns: 50, TtlSeconds: 3600}, RemainingTurns: 50}, nil
}

func (f *fakeRoles) ExecuteTool(_ *executorv1.ExecuteToolRequest,
	stream grpc.ServerStreamingServer[executorv1.ExecuteToolResponse]) error {
	for _, p := range f.progress {
		err := stream.Send(&executorv1.ExecuteToolResponse{
			Event: &executorv1.ExecuteToolResponse_Progress{Progress: &executorv1.Progress{Message: p}}})
		if err != nil {
			return err
		}
	}
	if f.hold != nil {
		select {
		case <-f.hold:
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
	if f.execute != nil {
		return f.execute
	}
	if f.result != nil {
		return stream.Send(&executorv1.ExecuteToolResponse{
			Event: &executorv1.ExecuteToolResponse_Result{Result: f.result}})
	}
	return status.Error(codes.Unimplemented, "the test gives every call a failure")
}

// edgeOver serves the edge's MCP endpoint in front of the fakes, with its
// configuration changed as the options say.
func edgeOver(t *testing.T, f *fakeRoles, options ...func(*Config)) string {
	t.Helper()
	srv := httptest.NewServer(edgeServer(t, f, options...).Handler())
	t.Cleanup(srv.Close)
	return srv.URL
}

// edgeServer is the edge in front of the fakes, with its configuration
// changed as the options say.
func edgeServer(t *testing.T, f *fakeRoles, options ...func(*Config)) *Server {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	// Memory on a server of its own, as a role is: its health, which says
	// whether it can store, is its server's (clients call no server that
	// says NOT_SERVING).
	memory := serveFake(t, ctx, func(g *serve.GRPC) {
		memoryv1.RegisterMemoryServiceServer(g.Server, f)
		g.SetStatus(!f.memoryDown, "zen.memory.v1.MemoryService")
	})
	others := serveFake(t, ctx, func(g *serve.GRPC) {
		routerv1.RegisterRouterServiceServer(g.Server, f)
		executorv1.RegisterExecutorServiceServer(g.Server, f)
	})
	cfg := Config{Version: "test", ProgressInterval: time.Second, MaxOutputTokens: 25_000, Home: t.TempDir()}
	for _, o := range options {
		o(&cfg)
	}
	s, err := New(ctx, cfg, Conns{Memory: memory, Router: others, Executor: others}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if f.memoryDown {
		// The edge learns memory's health from a watch stream: wait for
		// its first word.
		for tick := time.NewTicker(5 * time.Millisecond); s.Ready() == nil; <-tick.C {
			if ctx.Err() != nil {
				t.Fatal("the edge never heard memory was down")
			}
		}
	}
	return s
}

// serveFake serves what register registers, in-process, until ctx ends,
// and dials it.
func serveFake(t *testing.T, ctx context.Context, register func(*serve.GRPC)) *grpc.ClientConn {
	t.Helper()
	lis := serve.NewInProcess()
	g := serve.NewGRPC()
	register(g)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = g.Serve(ctx, lis.Listener())
	}()
	conn, err := lis.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		conn.Close()
		<-done
	})
	return conn
}

// post sends one JSON-RPC message as a 2025-11-25 client and reads the
// answer, whether a JSON body or an event stream.
func post(t *testing.T, url, body string) seen {
	t.Helper()
	status, raw := exchange(t, url, body)
	var msg struct {
		Error *struct {
			Code    int64
			Message string
		}
		Result *struct {
			IsError bool
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(raw, &msg); err != nil {
		return seen{HTTPStatus: status, Message: "not JSON-RPC: " + string(raw[:min(len(raw), 300)])}
	}
	got := seen{HTTPStatus: status}
	switch {
	case msg.Error != nil:
		got.Code, got.Message = msg.Error.Code, msg.Error.Message
	case msg.Result != nil && len(msg.Result.Content) > 0:
		var payload struct{ Content string }
		_ = json.Unmarshal([]byte(msg.Result.Content[0].Text), &payload)
		got.ToolError, got.Message = msg.Result.IsError, payload.Content
	}
	return got
}

// exchange sends one JSON-RPC message as a 2025-11-25 client and returns
// the HTTP status and the answer's bytes, from a JSON body or the last
// event of a stream.
func exchange(t *testing.T, url, body string) (int, []byte) {
	t.Helper()
	a := send(t, url, rawRequest{body: body, version: "2025-11-25"})
	raw := []byte(a.Body)
	if strings.HasPrefix(a.ContentType, "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(raw))
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				raw = []byte(data)
			}
		}
	}
	return a.Status, raw
}
