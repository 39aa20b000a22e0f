package main

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/latency"
)

// BenchmarkClusterLoad drives the make cluster layout (redis-server, each
// role its own process, two edges) with concurrent MCP clients, half on
// each edge. Every client keeps one conversation going, so each call
// loads, selects and extends a growing thread in Redis. It reports
// throughput and latency percentiles over all calls.
//
//	go test -run '^$' -bench ClusterLoad -benchtime 2000x ./cmd/zen
func BenchmarkClusterLoad(b *testing.B) {
	fake := fakemodel.New(b)
	c := &cluster{base: freeBase(b)}
	c.env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + zenHome, "ZEN_BIN=" + zenBin, "ZEN_CLUSTER_DIR=" + b.TempDir(),
		fmt.Sprintf("ZEN_CLUSTER_PORT_BASE=%d", c.base), "CUSTOM_API_URL=" + fake.URL(), "LOG_LEVEL=ERROR"}
	if out, err := c.script("up"); err != nil {
		b.Fatalf("cluster up: %v\n%s", err, out)
	}
	b.Cleanup(func() { _, _ = c.script("down") })
	for _, clients := range []int{8, 32} {
		b.Run(fmt.Sprintf("clients-%d", clients), func(b *testing.B) { loadRun(b, c, clients) })
	}
}

func loadRun(b *testing.B, c *cluster, clients int) {
	sessions := make([]*mcp.ClientSession, clients)
	threads := make([]string, clients)
	wd := b.TempDir()
	for i := range sessions {
		sessions[i] = connectHTTP(b, "http://"+c.addr(5+i%2)+"/mcp")
		res, err := sessions[i].CallTool(context.Background(), &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
			"prompt": "start", "model": "llama3.2", "working_directory_absolute_path": wd}})
		if err != nil || res.IsError {
			b.Fatalf("start: %v %v", err, res)
		}
		threads[i] = decode(res)["continuation_offer"].(map[string]any)["continuation_id"].(string)
	}
	var mu sync.Mutex
	var durations []time.Duration
	var next int
	b.ResetTimer()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range clients {
		wg.Go(func() {
			for turn := 0; ; turn++ {
				mu.Lock()
				if next >= b.N {
					mu.Unlock()
					return
				}
				next++
				mu.Unlock()
				id := threads[i]
				if turn > 0 && turn%20 == 0 {
					id = "" // threads reach the turn limit; start another now and then
				}
				args := map[string]any{"prompt": "and then?", "model": "llama3.2", "working_directory_absolute_path": wd}
				if id != "" {
					args["continuation_id"] = id
				}
				t0 := time.Now()
				res, err := sessions[i].CallTool(context.Background(), &mcp.CallToolParams{Name: "chat", Arguments: args})
				d := time.Since(t0)
				if err != nil || res.IsError {
					b.Errorf("chat: %v %v", err, res)
					return
				}
				if offer, ok := decode(res)["continuation_offer"].(map[string]any); ok {
					threads[i] = offer["continuation_id"].(string)
				}
				mu.Lock()
				durations = append(durations, d)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(len(durations))/elapsed.Seconds(), "calls/s")
	latency.Report(b, durations)
}
