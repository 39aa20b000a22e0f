package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// zen serve's roles call each other in-process (serve.Local), and its
// trace still shows each call as a cluster's does (TestOneTraceSpansEveryHop):
// a client span in the caller, a server span under it, all in the trace
// the MCP client started.
func TestServeTracesEachCallOnBothSides(t *testing.T) {
	rcv, addr := startReceiver(t)
	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://" + addr,
		"OTEL_EXPORTER_OTLP_INSECURE": "true",
		"OTEL_BSP_SCHEDULE_DELAY":     "50",
	})
	p := startZen(t, env, []string{"mcp"}, serveArgs()...)
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")

	const clientTrace = "5bf92f3577b34da6a3ce929d0e0e4737"
	chatInTrace(t, cs, clientTrace)
	wanted := []string{
		"zen.router.v1.RouterService/ResolveModel",
		"zen.memory.v1.MemoryService/",
		"zen.executor.v1.ExecutorService/ExecuteTool",
		"zen.router.v1.RouterService/Generate",
	}
	deadline := time.After(20 * time.Second)
	for {
		problems := rpcPairs(rcv.trace(clientTrace), wanted)
		if len(problems) == 0 {
			return
		}
		select {
		case <-rcv.arrived:
		case <-deadline:
			t.Fatalf("trace %s: %s; it has %v", clientTrace, strings.Join(problems, "; "), rcv.trace(clientTrace))
		}
	}
}

// rpcPairs says what keeps spans from showing every gRPC call of zen serve
// on both sides: a wanted call (by name prefix) with no server span under
// a client span of its name, or a server span whose client span is
// missing (the trace context did not cross).
func rpcPairs(spans []span, wanted []string) []string {
	byID := map[string]span{}
	for _, s := range spans {
		byID[s.id] = s
	}
	paired := func(s span) bool {
		p, ok := byID[s.parent]
		return ok && p.kind == tracepb.Span_SPAN_KIND_CLIENT && p.name == s.name && p.service == "zen-serve"
	}
	var problems []string
	for _, s := range spans {
		if s.kind == tracepb.Span_SPAN_KIND_SERVER && strings.HasPrefix(s.name, "zen.") && !paired(s) {
			problems = append(problems, fmt.Sprintf("server span %s/%s has no client span above it", s.service, s.name))
		}
	}
	for _, w := range wanted {
		found := false
		for _, s := range spans {
			found = found || s.service == "zen-serve" && s.kind == tracepb.Span_SPAN_KIND_SERVER &&
				strings.HasPrefix(s.name, w) && paired(s)
		}
		if !found {
			problems = append(problems, "no client and server spans for "+w)
		}
	}
	if len(missing(spans, []string{"zen-serve/tools/call chat"})) > 0 {
		problems = append(problems, "no tools/call chat span")
	}
	return problems
}

// TestTraceSettingsInADotEnvFileAreUsed: the exporter's own settings (where
// to send spans, without TLS, how soon) in a .env file, the usual place
// for zen stdio's settings, reach the exporter, which otherwise reads only
// the process environment: before, the spans went to the default address.
func TestTraceSettingsInADotEnvFileAreUsed(t *testing.T) {
	t.Parallel()
	rcv, addr := startReceiver(t)
	fake := fakemodel.New(t)
	dir := t.TempDir()
	dotEnv := "OTEL_EXPORTER_OTLP_ENDPOINT=http://" + addr + "\nOTEL_EXPORTER_OTLP_INSECURE=true\n" +
		"OTEL_BSP_SCHEDULE_DELAY=50\n"
	if err := writeFile(dir+"/.env", dotEnv); err != nil {
		t.Fatal(err)
	}
	p := startZenIn(t, dir, fakeEnv(fake), []string{"mcp"}, serveArgs()...)
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	const clientTrace = "6bf92f3577b34da6a3ce929d0e0e4738"
	chatInTrace(t, cs, clientTrace)
	waitFor(t, 20*time.Second, "the call's spans at the endpoint the .env file names", func() bool {
		return len(missing(rcv.trace(clientTrace), []string{"zen-serve/tools/call chat"})) == 0
	})
}

// chatInTrace makes one chat call in the trace the client started, as its
// _meta names it.
func chatInTrace(t *testing.T, cs *mcp.ClientSession, trace string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{
		Meta: mcp.Meta{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"},
		Name: "chat",
		Arguments: map[string]any{"prompt": "trace me", "working_directory_absolute_path": t.TempDir(),
			"model": "llama3.2"},
	})
	if err != nil || res.IsError {
		t.Fatalf("chat: %v %s", err, text(res))
	}
}
