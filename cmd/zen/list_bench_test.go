package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/latency"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// BenchmarkListThreadsSharedRedis times GET /v1/threads for a client with
// 25 threads while ten other clients keep 10,000 threads, all updated more
// recently, in the same Redis. It reports p50 and p99.
//
//	go test -run '^$' -bench ListThreadsSharedRedis -benchtime 500x ./cmd/zen
func BenchmarkListThreadsSharedRedis(b *testing.B) {
	rds := redistest.Start(b)
	var tokens strings.Builder
	token := func(client string) string { return client + "-token-0123456789abcdef" }
	clients := []string{"me"}
	for i := range 10 {
		clients = append(clients, fmt.Sprint("other-", i))
	}
	for _, c := range clients {
		fmt.Fprintf(&tokens, "%s %s\n", c, token(c))
	}
	file := filepath.Join(b.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte(tokens.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	env := mergeEnv(fakeEnv(fakemodel.New(b)), map[string]string{"REDIS_URL": rds.URL(), "ZEN_AUTH_TOKENS_FILE": file})
	p := startZen(b, env, []string{"gateway"}, serveArgs()...)
	gateway := "http://" + p.addr("gateway")
	now := time.Now()
	importThreads(b, gateway, token("me"), 25, now.Add(-time.Hour))
	for _, c := range clients[1:] {
		importThreads(b, gateway, token(c), 1000, now)
	}
	list := func() {
		code, body := authGet(b, gateway+"/v1/threads", token("me"))
		var page struct{ Threads []json.RawMessage }
		if err := json.Unmarshal(body, &page); code != 200 || err != nil || len(page.Threads) != 20 {
			b.Fatalf("GET /v1/threads = %d (%v), %d threads; want 20", code, err, len(page.Threads))
		}
	}
	latency.Measure(b, 20, list)
}

// importThreads gives the token's client n threads of one exchange each,
// the newest updated at newest.
func importThreads(b *testing.B, gateway, token string, n int, newest time.Time) {
	b.Helper()
	var body strings.Builder
	for i := range n {
		updated := newest.Add(-time.Duration(i) * time.Second).UTC().Format(time.RFC3339Nano)
		fmt.Fprintf(&body, `{"thread_id":%q,"tool_name":"chat","created_at":%q,"last_updated_at":%q,`+
			`"turns":[{"role":"ROLE_USER","content":"question %d"},{"role":"ROLE_ASSISTANT","content":"answer"}]}`+"\n",
			uuid.NewString(), updated, updated, i)
	}
	req, err := http.NewRequest("POST", gateway+"/v1/threads:import", strings.NewReader(body.String()))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if out, _ := io.ReadAll(resp.Body); resp.StatusCode != 200 {
		b.Fatalf("import: %d %s", resp.StatusCode, out)
	}
}

func authGet(b *testing.B, url, token string) (int, []byte) {
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}
