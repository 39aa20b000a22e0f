package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestBlackHoledMemoryFailsInTime: a memory that stops answering without
// closing its connections (a node gone, packets dropped) must not hold a
// call until the client gives up. Memory's reads have a deadline
// (15 s, serve's service config) and connections a keepalive that drops
// a silent one, so the call ends with an error naming memory.
func TestBlackHoledMemoryFailsInTime(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	env := fakeEnv(fake)
	grpcOnly := []string{"grpc"}
	mem := startZen(t, mergeEnv(env, map[string]string{"ZEN_MEMORY_STORE": "memory", "ZEN_GRPC_ADDR": "127.0.0.1:0"}),
		grpcOnly, "memory")
	rt := startZen(t, mergeEnv(env, map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), grpcOnly, "router")
	ex := startZen(t, mergeEnv(env, map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0", "ZEN_ROUTER_ADDR": rt.addr("grpc")}),
		grpcOnly, "executor")
	toMemory := startProxy(t, mem.addr("grpc"))
	edge := startZen(t, mergeEnv(env, map[string]string{"ZEN_MEMORY_ADDR": toMemory.Addr(),
		"ZEN_ROUTER_ADDR": rt.addr("grpc"), "ZEN_EXECUTOR_ADDR": ex.addr("grpc")}), []string{"mcp"},
		"edge", "--mcp-addr", "127.0.0.1:0")
	cs := connectHTTP(t, "http://"+edge.addr("mcp")+"/mcp")
	args := map[string]any{"prompt": "first", "model": "llama3.2", "working_directory_absolute_path": t.TempDir()}
	_, payload := callTool(t, cs, "chat", args)
	offer, _ := payload["continuation_offer"].(map[string]any)
	if offer == nil {
		t.Fatalf("no continuation offer: %v", payload)
	}
	args["continuation_id"] = offer["continuation_id"]

	toMemory.BlackHole()
	t.Cleanup(toMemory.Heal) // before the processes stop, so they stop at once
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	start := time.Now()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "chat", Arguments: args})
	took := time.Since(start)
	msg := ""
	switch {
	case ctx.Err() != nil:
		t.Fatalf("a call to a black-holed memory was still waiting after %s", took)
	case err != nil:
		msg = err.Error()
	case res.IsError:
		msg = text(res)
	default:
		t.Fatalf("a call continuing a thread answered though memory was unreachable: %s", text(res))
	}
	if !strings.Contains(msg, "memory") || took > 25*time.Second {
		t.Errorf("after %s the client was told %q; want an error naming memory within 25 s", took, msg)
	}
	t.Logf("black-holed memory: %s after %s", msg, took)
}
