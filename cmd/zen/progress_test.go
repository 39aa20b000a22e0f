package main

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestProgressKeepsSlowCallsAlive(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "worth the wait", Delay: 1200 * time.Millisecond}
	})
	env := mergeEnv(fakeEnv(fake), map[string]string{"ZEN_PROGRESS_INTERVAL": "200ms"})
	for _, transport := range []string{"http", "stdio"} {
		t.Run(transport, func(t *testing.T) {
			var mu sync.Mutex
			var got []*mcp.ProgressNotificationParams
			client := mcp.NewClient(&mcp.Implementation{Name: "zen-e2e", Version: "1"}, &mcp.ClientOptions{
				ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
					mu.Lock()
					got = append(got, req.Params)
					mu.Unlock()
				},
			})
			var tr mcp.Transport
			if transport == "http" {
				p := startZen(t, env, []string{"mcp"}, serveArgs()...)
				tr = &mcp.StreamableClientTransport{Endpoint: "http://" + p.addr("mcp") + "/mcp"}
			} else {
				cmd := exec.Command(zenBin, "stdio")
				cmd.Env, cmd.Dir = baseEnv(t, env), t.TempDir()
				tr = &mcp.CommandTransport{Command: cmd}
			}
			cs, err := client.Connect(t.Context(), tr, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			params := &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{"prompt": "slow", "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"}}
			params.SetProgressToken("progress-1")
			res, err := cs.CallTool(t.Context(), params)
			if err != nil || res.IsError {
				t.Fatalf("chat: %v %v", err, res)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) < 4 {
				t.Fatalf("%d progress notifications over a 1.2 s call at a 200 ms interval, want at least 4", len(got))
			}
			for i, p := range got {
				if p.ProgressToken != "progress-1" || p.Message == "" || i > 0 && p.Progress <= got[i-1].Progress {
					t.Errorf("notification %d = %+v", i, p)
				}
			}
			heartbeats := 0
			for _, p := range got {
				if strings.Contains(p.Message, "elapsed") {
					heartbeats++
				}
			}
			if heartbeats < 2 {
				t.Errorf("%d heartbeats during a silent 1.2 s wait at 200 ms, want at least 2", heartbeats)
			}
		})
	}
}
