package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestMemoryRestartedWithOtherLimitsTakesEffectAtOnce: the edge keeps none
// of memory's limits between calls, so a memory restarted with another
// MAX_CONVERSATION_TURNS is heard at the next call, without restarting the
// edge: in the offers, in the exchange that fills a thread, and in the
// refusal past the limit.
func TestMemoryRestartedWithOtherLimitsTakesEffectAtOnce(t *testing.T) {
	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{"ZEN_DATA_DIR": t.TempDir()})
	memAddr := freeAddr(t)
	memory := func(maxTurns string) *proc {
		return startZen(t, mergeEnv(env, map[string]string{"ZEN_GRPC_ADDR": memAddr, "MAX_CONVERSATION_TURNS": maxTurns}),
			[]string{"grpc"}, "memory")
	}
	grpcRole := func(role string, extra map[string]string) string {
		p := startZen(t, mergeEnv(env, mergeEnv(extra, map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"})),
			[]string{"grpc"}, role)
		return p.addr("grpc")
	}
	first := memory("50")
	router := grpcRole("router", nil)
	executor := grpcRole("executor", map[string]string{"ZEN_ROUTER_ADDR": router})
	edge := startZen(t, mergeEnv(env, map[string]string{"ZEN_MEMORY_ADDR": memAddr, "ZEN_ROUTER_ADDR": router,
		"ZEN_EXECUTOR_ADDR": executor}), []string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
	session := connectHTTP(t, "http://"+edge.addr("mcp")+"/mcp")
	wd := t.TempDir()
	chat := func(extra map[string]any) (*mcp.CallToolResult, map[string]any, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		args := mergeAny(map[string]any{"prompt": "hello", "working_directory_absolute_path": wd, "model": "llama3.2"},
			extra)
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "chat", Arguments: args})
		if err != nil {
			return nil, nil, err
		}
		var got map[string]any
		_ = json.Unmarshal([]byte(text(res)), &got)
		return res, got, nil
	}
	offered := func(got map[string]any) float64 {
		offer, _ := got["continuation_offer"].(map[string]any)
		n, _ := offer["remaining_turns"].(float64)
		return n
	}

	_, got, err := chat(nil)
	if err != nil || offered(got) != 48 {
		t.Fatalf("before the restart: %v %v; want an offer of 48 more turns of 50", got, err)
	}
	id := got["continuation_offer"].(map[string]any)["continuation_id"].(string)

	first.stop()
	memory("4")
	// The first call that reaches the restarted memory is told its limit.
	waitFor(t, 30*time.Second, "a new conversation offered 2 more turns of 4", func() bool {
		_, got, err := chat(nil)
		return err == nil && offered(got) == 2
	})
	res, got, err := chat(map[string]any{"continuation_id": id})
	if err != nil || res.IsError || got["status"] != "success" || got["continuation_offer"] != nil {
		t.Errorf("the exchange that fills the thread to 4: %v %v; want success and no offer", got, err)
	}
	res, got, err = chat(map[string]any{"continuation_id": id})
	meta, _ := got["metadata"].(map[string]any)
	if why, _ := meta["continuation_error"].(string); err != nil || res.IsError ||
		!strings.Contains(why, "limit of 4 turns") {
		t.Errorf("past the new limit: %v, %v; want it answered, saying it was not kept at the limit of 4", got, err)
	}
}

// mergeAny is mergeEnv for arguments.
func mergeAny(a, b map[string]any) map[string]any { return merged(a, b) }
