package main

import (
	"context"
	"net"
	"os"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/latency"
)

// BenchmarkChatOverhead measures what the stack adds to one chat call: a
// new conversation through MCP over HTTP, edge, memory, router, executor and
// back, against a fake model that answers at once. It reports p50 and p99.
//
//	go test -run '^$' -bench ChatOverhead -benchtime 2000x ./cmd/zen
func BenchmarkChatOverhead(b *testing.B) {
	for _, store := range []string{"memory", "sqlite"} {
		b.Run("one-process/"+store, func(b *testing.B) { benchOneProcess(b, store) })
	}
	b.Run("separate-processes/sqlite", func(b *testing.B) {
		fake := fakemodel.New(b)
		env := map[string]string{"CUSTOM_API_URL": fake.URL(), "ZEN_DATA_DIR": b.TempDir()}
		grpc := func(role string, extra map[string]string) string {
			p := startZen(b, mergeEnv(mergeEnv(env, extra), map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), []string{"grpc"}, role)
			return p.addr("grpc")
		}
		mem := grpc("memory", nil)
		rt := grpc("router", nil)
		ex := grpc("executor", map[string]string{"ZEN_ROUTER_ADDR": rt})
		edge := startZen(b, mergeEnv(env, map[string]string{"ZEN_MEMORY_ADDR": mem, "ZEN_ROUTER_ADDR": rt, "ZEN_EXECUTOR_ADDR": ex}),
			[]string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
		measure(b, connectHTTP(b, "http://"+edge.addr("mcp")+"/mcp"))
	})
}

// benchOneProcess runs zen serve inside the benchmark's own process.
func benchOneProcess(b *testing.B, store string) {
	fake := fakemodel.New(b)
	addrs := freeAddrs(b, 3)
	mcpAddr := addrs[0]
	// The calls name a temporary directory, outside the default file root
	// (home) of a process whose getenv is this map.
	env := map[string]string{"CUSTOM_API_URL": fake.URL(), "LOG_LEVEL": "ERROR", "ZEN_MEMORY_STORE": store,
		"ZEN_DATA_DIR": b.TempDir(), "ZEN_FILE_ROOTS": os.TempDir()}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--mcp-addr", mcpAddr, "--http-addr", addrs[1], "--grpc-addr", addrs[2]},
			func(k string) string { return env[k] })
	}()
	b.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			b.Errorf("zen serve: %v", err)
		}
	})
	measure(b, waitConnect(b, "http://"+mcpAddr+"/mcp"))
}

func measure(b *testing.B, cs *mcp.ClientSession) {
	args := map[string]any{"prompt": "How fast is this?", "working_directory_absolute_path": b.TempDir(), "model": "llama3.2"}
	call := func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "chat", Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("chat: %v %v", err, res)
		}
	}
	latency.Measure(b, 20, call) // the warm-up fills connections and caches
}

func freeAddr(b testing.TB) string {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer lis.Close()
	return lis.Addr().String()
}

// freeAddrs returns n distinct free loopback addresses: each listener stays
// open until all are chosen, so the kernel cannot hand one port out twice.
func freeAddrs(b testing.TB, n int) []string {
	var out []string
	for range n {
		lis, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		defer lis.Close()
		out = append(out, lis.Addr().String())
	}
	return out
}

// waitConnect retries until the in-process server accepts MCP.
func waitConnect(b testing.TB, url string) *mcp.ClientSession {
	var cs *mcp.ClientSession
	waitFor(b, 30*time.Second, "MCP at "+url, func() bool {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		c, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
		if err != nil {
			return false
		}
		if _, err = c.ListTools(context.Background(), nil); err != nil {
			c.Close()
			return false
		}
		cs = c
		return true
	})
	b.Cleanup(func() { cs.Close() })
	return cs
}
