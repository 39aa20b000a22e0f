package main

import (
	"context"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestAServerThatDoesNotStreamWithTheReferencesEnv: a reference .env for a
// local server, its timeouts included, works unchanged against a server
// that answers a streaming request with a whole JSON completion. Both calls
// succeed, the agent gets heartbeats while the server is silent, and the
// second call does not ask to stream.
func TestAServerThatDoesNotStreamWithTheReferencesEnv(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "answered whole", IgnoreStream: true, Delay: 700 * time.Millisecond}
	})
	dir := t.TempDir()
	dotEnv := "CUSTOM_API_URL=" + fake.URL() + "\nCUSTOM_MODEL_NAME=llama3.2\nCUSTOM_CONNECT_TIMEOUT=60.0\n" +
		"CUSTOM_READ_TIMEOUT=1800.0\nCUSTOM_WRITE_TIMEOUT=1800.0\nCUSTOM_POOL_TIMEOUT=1800.0\n"
	if err := writeFile(dir+"/.env", dotEnv); err != nil {
		t.Fatal(err)
	}
	p := startZenIn(t, dir, map[string]string{"ZEN_PROGRESS_INTERVAL": "150ms"}, []string{"mcp"}, serveArgs()...)
	var mu sync.Mutex
	var heartbeats int
	client := mcp.NewClient(&mcp.Implementation{Name: "zen-e2e", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			if strings.Contains(req.Params.Message, "elapsed") {
				mu.Lock()
				heartbeats++
				mu.Unlock()
			}
		},
	})
	endpoint := "http://" + p.addr("mcp") + "/mcp"
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: endpoint}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for i := range 2 {
		params := &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{"prompt": "hello",
			"working_directory_absolute_path": t.TempDir(), "model": "llama3.2"}}
		params.SetProgressToken("p")
		res, err := cs.CallTool(t.Context(), params)
		if err != nil || res.IsError || !strings.Contains(text(res), "answered whole") {
			t.Fatalf("call %d: err %v, result %s", i, err, text(res))
		}
	}
	var streamed []bool
	for _, r := range fake.Requests() {
		streamed = append(streamed, r.Stream)
	}
	if diff := cmp.Diff([]bool{true, false}, streamed); diff != "" {
		t.Errorf("requests asked to stream (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if heartbeats < 2 {
		t.Errorf("%d heartbeats over two silent 0.7 s calls at 150 ms, want at least 2", heartbeats)
	}
}

// TestABadReferenceTimeoutStopsZen: a timeout zen cannot read stops it at
// start, naming the variable and what it wants.
func TestABadReferenceTimeoutStopsZen(t *testing.T) {
	// A zen that ignored the variable would serve until this ends it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, zenBin, "serve", "--mcp-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--grpc-addr", "127.0.0.1:0")
	cmd.Env = baseEnv(t, map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "CUSTOM_READ_TIMEOUT": "30 minutes"})
	cmd.Dir = t.TempDir()
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "CUSTOM_READ_TIMEOUT=") ||
		!strings.Contains(string(out), "want a number of seconds") {
		t.Errorf("err %v, output %q; want a failure naming CUSTOM_READ_TIMEOUT and what it wants", err, out)
	}
}
