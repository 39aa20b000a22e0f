package main

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// twoClients is a shared zen serve with alice and bob, where bob has a
// thread of two turns that alice, the attacker, knows the id of.
type twoClients struct {
	p       *proc
	gateway string
	bobID   string
	bobJSON string // bob's thread as the gateway showed it to bob before the attacks
}

func startTwoClients(t *testing.T, env map[string]string) *twoClients {
	t.Helper()
	file := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(file, []byte("alice "+aliceToken+"\nbob "+bobToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	env = mergeEnv(mergeEnv(fakeEnv(fakemodel.New(t)), map[string]string{"ZEN_AUTH_TOKENS_FILE": file}), env)
	p := startZen(t, env, []string{"mcp", "gateway", "grpc"}, serveArgs()...)
	bob, err := connectAs(t, "http://"+p.addr("mcp")+"/mcp", bobToken)
	if err != nil {
		t.Fatal(err)
	}
	tc := &twoClients{p: p, gateway: "http://" + p.addr("gateway")}
	tc.bobID = startChat(t, stack{session: bob}, "bob's private question")
	tc.bobJSON = tc.bobsThread(t)
	return tc
}

// bobsThread is bob's thread as bob reads it.
func (tc *twoClients) bobsThread(t *testing.T) string {
	t.Helper()
	code, body := request(t, "GET", tc.gateway+"/v1/threads/"+tc.bobID, bobToken, "")
	if code != http.StatusOK {
		t.Fatalf("bob cannot read his own thread: %d %s", code, body)
	}
	return body
}

// untouched checks that nothing of bob's changed.
func (tc *twoClients) untouched(t *testing.T) {
	t.Helper()
	if diff := cmp.Diff(tc.bobJSON, tc.bobsThread(t)); diff != "" {
		t.Errorf("bob's thread changed (-before +after):\n%s", diff)
	}
}

// request sends one HTTP request (JSON when a body is given) and returns the
// status and the body.
func request(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	return requestWith(t, method, url, token, body, nil)
}

// requestWith is request with extra headers.
func requestWith(t *testing.T, method, url, token, body string, header map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// asImport turns a thread as the gateway shows it into one import line,
// with changes applied.
func asImport(t *testing.T, threadJSON string, change func(map[string]any)) string {
	t.Helper()
	var got struct{ Thread map[string]any }
	if err := json.Unmarshal([]byte(threadJSON), &got); err != nil || got.Thread == nil {
		t.Fatalf("not a thread: %v %s", err, threadJSON)
	}
	th := got.Thread
	delete(th, "expires_at")
	change(th)
	line, err := json.Marshal(th)
	if err != nil {
		t.Fatal(err)
	}
	return string(line) + "\n"
}

// TestSecurityIdentity: a client acts only for itself, whatever it writes in
// a query, a body or an import (issue 11, items 1 and 2).
func TestSecurityIdentity(t *testing.T) {
	t.Parallel()
	tc := startTwoClients(t, nil)
	gw := tc.gateway
	leaks := func(body string) bool { return strings.Contains(body, "bob's private question") }
	asBob := map[string]string{"Grpc-Metadata-Zen-Client-Id": "bob"}
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
		refused                  func(code int, body string) bool
	}{
		{"read bob's thread naming bob in a metadata header", "GET", "/v1/threads/" + tc.bobID, "", asBob,
			func(code int, body string) bool { return code == http.StatusNotFound }},
		{"list bob's threads naming bob in a metadata header", "GET", "/v1/threads", "", asBob,
			func(code int, body string) bool { return code == http.StatusOK && !strings.Contains(body, tc.bobID) }},
		{"read bob's thread naming bob in the query", "GET", "/v1/threads/" + tc.bobID + "?client_id=bob", "", nil,
			func(code int, body string) bool { return code == http.StatusNotFound || code == http.StatusBadRequest }},
		{"list bob's threads naming bob in the query", "GET", "/v1/threads?client_id=bob", "", nil,
			func(code int, body string) bool { return code == http.StatusOK && !strings.Contains(body, tc.bobID) }},
		{"read bob's history naming bob in the query", "GET", "/v1/threads/" + tc.bobID + "/history?client_id=bob", "", nil,
			func(code int, body string) bool { return code == http.StatusNotFound || code == http.StatusBadRequest }},
		{"view bob's thread in the thread browser", "GET", "/v1/threads/" + tc.bobID + "/view", "", asBob,
			func(code int, body string) bool { return code == http.StatusNotFound }},
		{"poll bob's thread in the thread browser", "GET", "/v1/threads/" + tc.bobID + "/summary", "", asBob,
			func(code int, body string) bool { return code == http.StatusNotFound }},
		{"browse threads naming bob in the query and a header", "GET", "/v1/threads:browse?client_id=bob", "", asBob,
			func(code int, body string) bool { return code == http.StatusOK && !strings.Contains(body, tc.bobID) }},
		{"search the thread browser for bob's prompt", "GET", "/v1/threads:browse?query=private", "", asBob,
			func(code int, body string) bool { return code == http.StatusOK && !strings.Contains(body, tc.bobID) }},
		{"open the thread browser's page naming bob", "GET", "/?client_id=bob", "", asBob,
			func(code int, body string) bool { return code == http.StatusOK && !strings.Contains(body, tc.bobID) }},
		{"load the thread browser's script naming bob", "GET", "/ui/app.js?client_id=bob", "", asBob,
			func(code int, body string) bool { return code == http.StatusOK && !strings.Contains(body, tc.bobID) }},
		{"export bob's threads naming bob in the query", "GET", "/v1/threads:export?client_id=bob", "", nil,
			func(code int, body string) bool { return code == http.StatusOK && !strings.Contains(body, tc.bobID) }},
		{"export bob's thread by id naming bob", "GET", "/v1/threads:export?client_id=bob&thread_id=" + tc.bobID, "", nil,
			func(code int, body string) bool { return code >= 400 }},
		{"branch bob's thread naming bob in the body", "POST", "/v1/threads/" + tc.bobID + ":branch",
			`{"client_id":"bob"}`, nil,
			func(code int, body string) bool { return code == http.StatusNotFound || code == http.StatusBadRequest }},
		{"branch bob's thread naming bob in the query", "POST", "/v1/threads/" + tc.bobID + ":branch?client_id=bob",
			`{}`, nil,
			func(code int, body string) bool { return code == http.StatusNotFound || code == http.StatusBadRequest }},
		{"delete bob's thread naming bob in the query", "DELETE", "/v1/threads/" + tc.bobID + "?client_id=bob", "", nil,
			func(code int, body string) bool { return code == http.StatusNotFound || code == http.StatusBadRequest }},
		{"replace bob's thread by import", "POST", "/v1/threads:import?replace=true",
			asImport(t, tc.bobJSON, func(th map[string]any) { th["turns"] = []any{}; th["tool_name"] = "mallory" }), nil,
			func(code int, body string) bool {
				return code == http.StatusConflict && strings.Contains(body, "another client") && !strings.Contains(body, "bob")
			}},
		{"import over bob's thread id without replace", "POST", "/v1/threads:import",
			asImport(t, tc.bobJSON, func(th map[string]any) { th["tool_name"] = "mallory" }), nil,
			func(code int, body string) bool { return code == http.StatusConflict && !strings.Contains(body, "bob") }},
		{"import a thread whose parent is bob's", "POST", "/v1/threads:import",
			asImport(t, tc.bobJSON, func(th map[string]any) {
				th["parent_thread_id"], th["thread_id"], th["turns"] = tc.bobID, "6f1c1a52-3c52-4c61-9d8e-0d7c0b6a7e01", []any{}
			}), nil,
			func(code int, body string) bool {
				return code == http.StatusBadRequest && strings.Contains(body, "not one of your")
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, body := requestWith(t, c.method, gw+c.path, aliceToken, c.body, c.header)
			if !c.refused(code, body) || leaks(body) {
				t.Errorf("%s %s as alice: %d %s", c.method, c.path, code, body)
			}
			tc.untouched(t)
		})
	}
	// Whatever an import says, what alice imports is hers: bob never sees it.
	t.Run("import a thread naming bob as its owner", func(t *testing.T) {
		line := asImport(t, tc.bobJSON, func(th map[string]any) {
			th["thread_id"], th["client_id"] = "0d4b8f2e-5a1c-4f0e-8b7d-2c9e6a1f3b10", "bob"
		})
		if code, body := request(t, "POST", gw+"/v1/threads:import", aliceToken, line); code != http.StatusOK {
			t.Fatalf("alice's own import: %d %s", code, body)
		}
		code, _ := request(t, "GET", gw+"/v1/threads/0d4b8f2e-5a1c-4f0e-8b7d-2c9e6a1f3b10", bobToken, "")
		if code != http.StatusNotFound {
			t.Errorf("bob reads a thread alice imported in his name: %d", code)
		}
		tc.untouched(t)
	})
}
