package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

const (
	aliceToken = "alice-0123456789abcdef"
	bobToken   = "bob-fedcba9876543210xx"
)

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

func connectAs(t *testing.T, url, token string) (*mcp.ClientSession, error) {
	client := mcp.NewClient(&mcp.Implementation{Name: "zen-e2e", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}
	cs, err := client.Connect(t.Context(), tr, nil)
	if err == nil {
		t.Cleanup(func() { cs.Close() })
	}
	return cs, err
}

func getAs(t *testing.T, url, token string) int {
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// aliceAndBob is zen serve with env and a tokens file naming two clients,
// alice and bob (aliceToken, bobToken), and its MCP URL and gateway.
func aliceAndBob(t *testing.T, env map[string]string) (mcpURL, gateway string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("# client token\nalice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startZen(t, mergeEnv(env, map[string]string{"ZEN_AUTH_TOKENS_FILE": file}), []string{"mcp", "gateway"},
		serveArgs()...)
	return "http://" + p.addr("mcp") + "/mcp", "http://" + p.addr("gateway")
}

func TestTokensIsolateClients(t *testing.T) {
	mcpURL, gw := aliceAndBob(t, fakeEnv(fakemodel.New(t)))

	if _, err := connectAs(t, mcpURL, "not-a-token-at-all"); err == nil {
		t.Fatal("a wrong token connected")
	}
	if code := getAs(t, mcpURL, ""); code != http.StatusUnauthorized {
		t.Errorf("MCP without a token: %d, want 401", code)
	}
	alice, err := connectAs(t, mcpURL, aliceToken)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := connectAs(t, mcpURL, bobToken)
	if err != nil {
		t.Fatal(err)
	}
	id := startChat(t, stack{session: alice}, "alice's private question")

	res, _ := callTool(t, bob, "chat", map[string]any{"prompt": "let me in", "working_directory_absolute_path": t.TempDir(), "continuation_id": id})
	if !res.IsError || !strings.Contains(text(res), "was not found or has expired") {
		t.Errorf("bob continued alice's thread: %s", text(res))
	}
	if r, err := bob.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "zen://threads"}); err != nil || strings.Contains(r.Contents[0].Text, id) {
		t.Errorf("bob's zen://threads shows alice's thread: %v %v", r, err)
	}
	if r, err := alice.ReadResource(t.Context(), &mcp.ReadResourceParams{URI: "zen://threads"}); err != nil || !strings.Contains(r.Contents[0].Text, id) {
		t.Errorf("alice's zen://threads lacks her thread: %v %v", r, err)
	}

	for _, tc := range []struct {
		path, token string
		want        int
	}{
		{"/v1/threads/" + id, "", http.StatusUnauthorized},
		{"/v1/threads/" + id, bobToken, http.StatusNotFound},
		{"/v1/threads/" + id, aliceToken, http.StatusOK},
		{"/v1/models", "", http.StatusUnauthorized},
		{"/healthz", "", http.StatusOK},
		{"/readyz", "", http.StatusOK},
	} {
		if code := getAs(t, gw+tc.path, tc.token); code != tc.want {
			t.Errorf("GET %s with %q: %d, want %d", tc.path, tc.token, code, tc.want)
		}
	}
}
