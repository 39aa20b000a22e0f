package main

import (
	"context"
	"encoding/hex"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
)

// receiver is an in-test OTLP/gRPC trace collector.
type receiver struct {
	collectortrace.UnimplementedTraceServiceServer
	mu      sync.Mutex
	spans   []span
	arrived chan struct{} // signalled after each export
}

type span struct {
	service, name, traceID string
	kind                   tracepb.Span_SpanKind
	id, parent             string
	start, end             time.Time
}

func (r *receiver) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	defer func() {
		select {
		case r.arrived <- struct{}{}:
		default:
		}
	}()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, span{
					service: service,
					name:    s.GetName(),
					traceID: hex.EncodeToString(s.GetTraceId()),
					kind:    s.GetKind(),
					id:      hex.EncodeToString(s.GetSpanId()),
					parent:  hex.EncodeToString(s.GetParentSpanId()),
					start:   time.Unix(0, int64(s.GetStartTimeUnixNano())),
					end:     time.Unix(0, int64(s.GetEndTimeUnixNano())),
				})
			}
		}
	}
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

func (r *receiver) trace(id string) []span {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []span
	for _, s := range r.spans {
		if s.traceID == id {
			out = append(out, s)
		}
	}
	return out
}

func startReceiver(t testing.TB) (*receiver, string) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{arrived: make(chan struct{}, 1)}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, r)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return r, lis.Addr().String()
}

// missing reports which wanted "service/span-name-prefix" pairs are missing.
func missing(spans []span, want []string) []string {
	var out []string
	for _, w := range want {
		service, prefix, _ := strings.Cut(w, "/")
		found := false
		for _, s := range spans {
			found = found || s.service == service && strings.HasPrefix(s.name, prefix)
		}
		if !found {
			out = append(out, w)
		}
	}
	return out
}

func TestOneTraceSpansEveryHop(t *testing.T) {
	rcv, addr := startReceiver(t)
	fake := fakemodel.New(t)
	env := fakeEnv(fake)
	env["OTEL_EXPORTER_OTLP_ENDPOINT"] = "http://" + addr
	env["OTEL_EXPORTER_OTLP_INSECURE"] = "true"
	env["OTEL_BSP_SCHEDULE_DELAY"] = "50"
	st := splitStack(t, env)

	// The client starts the trace; zen must continue it.
	const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := st.session.CallTool(ctx, &mcp.CallToolParams{
		Meta: mcp.Meta{"traceparent": "00-" + clientTrace + "-00f067aa0ba902b7-01"},
		Name: "chat", Arguments: map[string]any{"prompt": "trace me", "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"},
	})
	if err != nil || res.IsError {
		t.Fatalf("chat: %v %s", err, text(res))
	}
	if got := decode(res)["metadata"].(map[string]any)["trace_id"]; got != clientTrace {
		t.Errorf("metadata.trace_id = %v, want the client's %s", got, clientTrace)
	}
	if tp := fake.Requests()[0].Header.Get("Traceparent"); !strings.Contains(tp, clientTrace) {
		t.Errorf("provider request traceparent = %q, want trace %s", tp, clientTrace)
	}

	want := []string{
		"zen-edge/tools/call chat",
		"zen-edge/zen.router.v1.RouterService/ResolveModel",
		"zen-memory/zen.memory.v1.MemoryService/CreateThread",
		"zen-executor/zen.executor.v1.ExecutorService/ExecuteTool",
		"zen-router/zen.router.v1.RouterService/Generate",
		"zen-router/provider POST /v1/chat/completions",
	}
	deadline := time.After(20 * time.Second)
wait:
	for len(missing(rcv.trace(clientTrace), want)) > 0 {
		select {
		case <-rcv.arrived:
		case <-deadline:
			break wait
		}
	}
	if m := missing(rcv.trace(clientTrace), want); len(m) > 0 {
		t.Errorf("trace %s lacks %v; it has %v", clientTrace, m, rcv.trace(clientTrace))
	}
}
