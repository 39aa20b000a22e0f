package main

import (
	"context"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	edgeserver "github.com/zenmcp/zen/services/edge/server"
	memoryserver "github.com/zenmcp/zen/services/memory/server"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
)

// memoryCalls counts the calls a memory role answers, by method, and keeps
// the turn counts PrepareCall answered and AppendTurns sent back.
type memoryCalls struct {
	mu                 sync.Mutex
	n                  map[string]int
	prepared, appended []int32
}

func (c *memoryCalls) intercept(ctx context.Context, req any, info *grpc.UnaryServerInfo,
	handler grpc.UnaryHandler) (any, error) {
	resp, err := handler(ctx, req)
	if method, ok := strings.CutPrefix(info.FullMethod, "/zen.memory.v1.MemoryService/"); ok {
		c.mu.Lock()
		c.n[method]++
		if r, ok := resp.(*memoryv1.PrepareCallResponse); ok && r.GetToolName() != "" {
			c.prepared = append(c.prepared, r.GetTurnCount())
		}
		if r, ok := req.(*memoryv1.AppendTurnsRequest); ok {
			c.appended = append(c.appended, r.GetTurnCountSeen())
		}
		c.mu.Unlock()
	}
	return resp, err
}

// take returns the counts so far and starts again from none.
func (c *memoryCalls) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

// countedMemory serves the real memory role, in memory, on loopback behind
// calls, and returns its address.
func countedMemory(t *testing.T, calls *memoryCalls) string {
	t.Helper()
	mem, err := memoryserver.New(memoryserver.Config{Store: "memory", TTL: time.Hour, MaxTurns: 50},
		slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	g := serve.NewGRPC(grpc.ChainUnaryInterceptor(calls.intercept))
	mem.Register(g)
	g.SetServing(memoryserver.ServiceName)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		<-done
		mem.Close()
	})
	return lis.Addr().String()
}

// runRole runs one of zen's gRPC roles as its own process until the test
// ends, and returns the address it listens on, once it listens: the next
// role may call it at once, before its connection would have backed off.
// A process, not run() in a goroutine: run sets process-wide settings once.
func runRole(t *testing.T, env map[string]string, args ...string) string {
	t.Helper()
	// On a port of its own choosing: one chosen free beforehand may be
	// another test's by the time the role listens.
	return startZen(t, env, []string{"grpc"}, append(args, "--grpc-addr", "127.0.0.1:0")...).addr("grpc")
}

// edgeSession serves an edge over the three roles' addresses and connects
// an MCP client to it.
func edgeSession(t *testing.T, memory, router, executor string) *mcp.ClientSession {
	t.Helper()
	var conns edgeserver.Conns
	for _, c := range []struct {
		addr string
		dst  *grpc.ClientConnInterface
	}{{memory, &conns.Memory}, {router, &conns.Router}, {executor, &conns.Executor}} {
		conn, err := serve.Dial(c.addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		*c.dst = conn
	}
	edge, err := edgeserver.New(t.Context(), edgeserver.Config{Version: "test", ProgressInterval: time.Second,
		MaxOutputTokens: 25_000, Home: zenHome}, conns, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(edge.Handler())
	t.Cleanup(srv.Close)
	return connectHTTP(t, srv.URL)
}

// TestAContinuedCallAsksMemoryOnceToPrepareAndOnceToStore counts the calls
// a real memory role answers for each call: one before the call runs
// (PrepareCall: the limits, and for a continuation the thread, its
// workflow state and the history for the model) and one to keep the
// exchange, whatever the thread's length and whether the continuation
// names its model or inherits it.
func TestAContinuedCallAsksMemoryOnceToPrepareAndOnceToStore(t *testing.T) {
	fake := fakemodel.New(t)
	calls := &memoryCalls{n: map[string]int{}}
	memory := countedMemory(t, calls)
	env := map[string]string{"CUSTOM_API_URL": fake.URL()}
	router := runRole(t, env, "router")
	executor := runRole(t, mergeEnv(env, map[string]string{"ZEN_ROUTER_ADDR": router}), "executor")
	session := edgeSession(t, memory, router, executor)
	wd := t.TempDir()

	_, first := callTool(t, session, "chat", map[string]any{"prompt": "one", "working_directory_absolute_path": wd,
		"model": "llama3.2"})
	offer, _ := first["continuation_offer"].(map[string]any)
	id, _ := offer["continuation_id"].(string)
	if id == "" {
		t.Fatalf("the first call offers no continuation: %v", first)
	}
	if diff := cmp.Diff(map[string]int{"PrepareCall": 1, "CreateThread": 1}, calls.take()); diff != "" {
		t.Errorf("a new conversation's memory calls (-want +got):\n%s", diff)
	}
	for i, name := range []string{"naming its model", "inheriting the thread's model"} {
		for turn := range 3 {
			args := map[string]any{"prompt": "more", "working_directory_absolute_path": wd, "continuation_id": id}
			if i == 0 {
				args["model"] = "llama3.2"
			}
			res, got := callTool(t, session, "chat", args)
			if res.IsError || got["continuation_offer"] == nil {
				t.Fatalf("%s, turn %d: %s", name, turn, text(res))
			}
			if diff := cmp.Diff(map[string]int{"PrepareCall": 1, "AppendTurns": 1}, calls.take()); diff != "" {
				t.Errorf("%s, turn %d: memory calls (-want +got):\n%s", name, turn, diff)
			}
		}
	}
	// Each append tells memory where its exchange begins: the count the
	// call was prepared with.
	want := []int32{2, 4, 6, 8, 10, 12}
	if diff := cmp.Diff(want, calls.prepared); diff != "" {
		t.Errorf("the turn counts PrepareCall answered (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, calls.appended); diff != "" {
		t.Errorf("the turn counts AppendTurns sent back (-want +got):\n%s", diff)
	}
}
