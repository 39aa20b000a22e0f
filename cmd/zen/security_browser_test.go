package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// A web page open in the user's browser is the attacker here: it can make
// the browser send simple requests to any address (text/plain or form
// bodies, no custom headers) and, by DNS rebinding, read answers from a
// server whose Host it names. Each case is one such request; each must be
// refused with a clear message and leave the victim's threads as they were.

const (
	rebindHost = "attacker.example:8081"
	evilOrigin = "https://attacker.example"
	victimText = "the victim's private plan"
)

// addrRule says what a case's answer may show of addresses.
type addrRule int

const (
	anyAddress  addrRule = iota // not a readiness answer: it may echo the caller's own Host
	noAddress                   // readiness for an unauthenticated caller: no host:port at all
	memoryShown                 // readiness for an authenticated caller: where memory was sought
)

// addrPattern matches an address such as 127.0.0.1:9090 or [::1]:9090.
var addrPattern = regexp.MustCompile(`(\d{1,3}(\.\d{1,3}){3}|\[[0-9a-fA-F:]+\]|localhost):\d+`)

// browserVictim is a zen with one client's conversation in it, and what that
// conversation looked like before the attacks.
type browserVictim struct {
	gateway string // reached the honest way, over loopback
	mcp     string
	id      string
	thread  any
	threads any
}

func newBrowserVictim(t *testing.T, mcpURL, gatewayURL string) *browserVictim {
	st := stack{session: connectHTTP(t, mcpURL), gateway: gatewayURL}
	v := &browserVictim{gateway: gatewayURL, mcp: mcpURL, id: startChat(t, st, victimText)}
	v.thread, v.threads = v.state(t)
	return v
}

// state is the victim's thread with its turns and the list of every thread.
func (v *browserVictim) state(t *testing.T) (thread, threads any) {
	t.Helper()
	code, got := getJSON(t, v.gateway+"/v1/threads/"+v.id)
	if code != http.StatusOK {
		t.Fatalf("the victim's thread answers %d: %v", code, got)
	}
	_, list := getJSON(t, v.gateway+"/v1/threads?page_size=100")
	return got, list
}

// intact fails when the victim's thread changed or another thread appeared.
func (v *browserVictim) intact(t *testing.T) {
	t.Helper()
	thread, threads := v.state(t)
	if diff := cmp.Diff(v.thread, thread); diff != "" {
		t.Errorf("the victim's thread changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(v.threads, threads); diff != "" {
		t.Errorf("the thread list changed (-before +after):\n%s", diff)
	}
	if turns := thread.(map[string]any)["thread"].(map[string]any)["turns"].([]any); len(turns) != 2 {
		t.Errorf("the victim's thread has %d turns, want 2", len(turns))
	}
}

// exportLine is the victim's thread as an import line, its text replaced by
// what an attacker would plant.
func (v *browserVictim) exportLine(t *testing.T) string {
	t.Helper()
	code, line := do(t, "GET", v.gateway+"/v1/threads:export?thread_id="+v.id, "")
	if code != http.StatusOK || !strings.Contains(string(line), victimText) {
		t.Fatalf("export: %d %s", code, line)
	}
	return strings.ReplaceAll(string(line), victimText, "planted by the attacker")
}

func browserReq(t *testing.T, method, url, body string, header map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	return req
}

// mcpInitialize is the first message any MCP client sends.
const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
	`"capabilities":{},"clientInfo":{"name":"attacker","version":"1"}}}`

var mcpHeaders = map[string]string{
	"Content-Type": "application/json",
	"Accept":       "application/json, text/event-stream",
}

func withHeader(a map[string]string, kv ...string) map[string]string {
	out := merged(a, nil)
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// machineHost is the Host a request carries when it reaches a zen on
// 0.0.0.0 through the machine's own address (a container's published port).
// Tests send such requests over loopback with this Host, since only the Host
// header decides; they never dial beyond loopback. (A documentation address.)
const machineHost = "198.51.100.7"

// closedAddr is a loopback address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	return addr
}

func listenerPort(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSecurityBrowser(t *testing.T) {
	fake := fakemodel.New(t)
	local := startZen(t, fakeEnv(fake), []string{"mcp", "gateway", "grpc"}, serveArgs()...)
	localMCP := "http://" + local.addr("mcp") + "/mcp"
	v := newBrowserVictim(t, localMCP, "http://"+local.addr("gateway"))
	planted := v.exportLine(t)

	// The compose layout: listeners on 0.0.0.0, reached through another
	// interface; its own victim, reached honestly over loopback.
	exposed := startZen(t, mergeEnv(fakeEnv(fake), map[string]string{"ZEN_ALLOWED_HOSTS": "zen.internal.test"}),
		[]string{"mcp", "gateway", "grpc"},
		"serve", "--mcp-addr", "0.0.0.0:0", "--http-addr", "0.0.0.0:0", "--grpc-addr", "127.0.0.1:0")
	mcpPort, gwPort := listenerPort(t, exposed.addr("mcp")), listenerPort(t, exposed.addr("gateway"))
	exposedMCP := "http://127.0.0.1:" + mcpPort + "/mcp"
	ev := newBrowserVictim(t, exposedMCP, "http://127.0.0.1:"+gwPort)

	// Readiness with memory out of reach, so the answer is "not ready" and
	// would name where memory lives. Router and executor are the local
	// zen's, so the edge can start.
	memory := closedAddr(t)
	inner := map[string]string{
		"ZEN_MEMORY_ADDR":   memory,
		"ZEN_ROUTER_ADDR":   local.addr("grpc"),
		"ZEN_EXECUTOR_ADDR": local.addr("grpc"),
	}
	// Roles with tokens reach router and executor of a zen that shares
	// their service token: one without it refuses them.
	const service = "service-0123456789abcdef"
	tokenLocal := startZen(t, mergeEnv(fakeEnv(fake), map[string]string{"ZEN_SERVICE_TOKEN": service}),
		[]string{"grpc"}, serveArgs()...)
	withToken := mergeEnv(inner, map[string]string{
		"ZEN_AUTH_TOKEN":    aliceToken,
		"ZEN_SERVICE_TOKEN": service,
		"ZEN_ROUTER_ADDR":   tokenLocal.addr("grpc"),
		"ZEN_EXECUTOR_ADDR": tokenLocal.addr("grpc"),
	})
	openGW := startZen(t, inner, []string{"gateway"}, "gateway", "--http-addr", "127.0.0.1:0")
	authGW := startZen(t, withToken, []string{"gateway"}, "gateway", "--http-addr", "127.0.0.1:0")
	authEdge := startZen(t, withToken, []string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
	openReady, authReady := "http://"+openGW.addr("gateway")+"/readyz", "http://"+authGW.addr("gateway")+"/readyz"
	edgeReady := "http://" + authEdge.addr("mcp") + "/readyz"

	rebind := map[string]string{"Host": rebindHost}
	// Without Origin or Sec-Fetch-Site, as an older browser sends them: the
	// content type alone must stop these.
	textPlain := map[string]string{"Content-Type": "text/plain;charset=UTF-8"}
	form := map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }

	for _, tc := range []struct {
		name     string
		req      func(t *testing.T) *http.Request
		wantCode int
		wantMsg  string // in the refusal
		addr     addrRule
		victim   *browserVictim
	}{
		{"rebound Host lists threads", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/v1/threads", "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host reads a thread", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/v1/threads/"+v.id, "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host exports every thread", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/v1/threads:export", "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host reads a thread's history", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/v1/threads/"+v.id+"/history", "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host opens the thread browser", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/", "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host loads the thread browser's script", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/ui/app.js", "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host browses threads", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/v1/threads:browse", "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host reads a thread's view", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/v1/threads/"+v.id+"/view", "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host polls a thread's summary", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", v.gateway+"/v1/threads/"+v.id+"/summary", "", rebind)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"rebound Host opens an MCP session", func(t *testing.T) *http.Request {
			return browserReq(t, "POST", v.mcp, mcpInitialize, withHeader(mcpHeaders, "Host", rebindHost))
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, v},
		{"cross-site text/plain import overwrites a thread", func(t *testing.T) *http.Request {
			return browserReq(t, "POST", v.gateway+"/v1/threads:import?replace=true", planted, textPlain)
		}, 415, "Content-Type: application/json", anyAddress, v},
		{"cross-site import without a Content-Type", func(t *testing.T) *http.Request {
			return browserReq(t, "POST", v.gateway+"/v1/threads:import?replace=true", planted, nil)
		}, 415, "Content-Type: application/json", anyAddress, v},
		{"cross-site text/plain branch", func(t *testing.T) *http.Request {
			return browserReq(t, "POST", v.gateway+"/v1/threads/"+v.id+":branch", "{}", textPlain)
		}, 415, "Content-Type: application/json", anyAddress, v},
		{"form-encoded delete through a method override", func(t *testing.T) *http.Request {
			h := withHeader(form, "X-HTTP-Method-Override", "DELETE")
			return browserReq(t, "POST", v.gateway+"/v1/threads/"+v.id, "", h)
		}, 415, "Content-Type: application/json", anyAddress, v},
		{"form-encoded delete", func(t *testing.T) *http.Request {
			return browserReq(t, "DELETE", v.gateway+"/v1/threads/"+v.id, "a=b", form)
		}, 415, "Content-Type: application/json", anyAddress, v},
		{"foreign Origin on a JSON import", func(t *testing.T) *http.Request {
			h := map[string]string{"Content-Type": "application/json", "Origin": evilOrigin}
			return browserReq(t, "POST", v.gateway+"/v1/threads:import?replace=true", planted, h)
		}, 403, "cross-origin", anyAddress, v},
		{"cross-site fetch metadata on a JSON branch", func(t *testing.T) *http.Request {
			h := map[string]string{"Content-Type": "application/json", "Sec-Fetch-Site": "cross-site"}
			return browserReq(t, "POST", v.gateway+"/v1/threads/"+v.id+":branch", "{}", h)
		}, 403, "cross-origin", anyAddress, v},
		{"Host not allowed on the gateway on 0.0.0.0", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", "http://127.0.0.1:"+gwPort+"/v1/threads:export", "",
				map[string]string{"Host": machineHost + ":" + gwPort})
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, ev},
		{"Host not allowed on MCP on 0.0.0.0", func(t *testing.T) *http.Request {
			return browserReq(t, "POST", "http://127.0.0.1:"+mcpPort+"/mcp", mcpInitialize,
				withHeader(mcpHeaders, "Host", machineHost+":"+mcpPort))
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, ev},
		{"rebound Host on MCP on 0.0.0.0", func(t *testing.T) *http.Request {
			url := "http://127.0.0.1:" + mcpPort + "/mcp"
			h := withHeader(mcpHeaders, "Host", "zen.internal.test.attacker.example")
			return browserReq(t, "POST", url, mcpInitialize, h)
		}, 403, "ZEN_ALLOWED_HOSTS", anyAddress, ev},
		{"readiness with auth off shows no address", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", openReady, "", nil)
		}, 503, "memory", noAddress, v},
		{"readiness without a token shows no address", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", authReady, "", nil)
		}, 503, "memory", noAddress, v},
		{"readiness with a wrong token shows no address", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", authReady, "", bearer(bobToken))
		}, 503, "memory", noAddress, v},
		{"edge readiness without a token shows no address", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", edgeReady, "", nil)
		}, 503, "memory", noAddress, v},
		{"readiness with a token shows where memory is", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", authReady, "", bearer(aliceToken))
		}, 503, "memory", memoryShown, v},
		{"edge readiness with a token shows where memory is", func(t *testing.T) *http.Request {
			return browserReq(t, "GET", edgeReady, "", bearer(aliceToken))
		}, 503, "memory", memoryShown, v},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			resp, err := http.DefaultClient.Do(tc.req(t))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body := string(raw)
			if resp.StatusCode != tc.wantCode || !strings.Contains(body, tc.wantMsg) {
				t.Errorf("got %d %s, want %d with %q", resp.StatusCode, body, tc.wantCode, tc.wantMsg)
			}
			if tc.addr == memoryShown && !strings.Contains(body, memory) {
				t.Errorf("an authenticated caller's readiness lacks memory's address %s: %s", memory, body)
			}
			if tc.addr == noAddress && addrPattern.MatchString(body) {
				t.Errorf("the answer shows an address (%s): %s", addrPattern.FindString(body), body)
			}
			tc.victim.intact(t)
		})
	}

	t.Run("exposed without ZEN_ALLOWED_HOSTS does not start", func(t *testing.T) {
		t.Parallel()
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, zenBin, "serve", "--mcp-addr", "0.0.0.0:0", "--http-addr", "127.0.0.1:0",
			"--grpc-addr", "127.0.0.1:0")
		cmd.Env, cmd.Dir = baseEnv(t, fakeEnv(fake)), t.TempDir()
		out, err := cmd.CombinedOutput()
		if ctx.Err() != nil || err == nil || !strings.Contains(string(out), "ZEN_ALLOWED_HOSTS") {
			t.Errorf("zen serve on 0.0.0.0 without ZEN_ALLOWED_HOSTS: %v\n%s", err, out)
		}
	})
	t.Run("honest clients still work", func(t *testing.T) {
		t.Parallel()
		ok := browserReq(t, "GET", "http://127.0.0.1:"+gwPort+"/v1/threads/"+ev.id, "", map[string]string{
			"Host": "zen.internal.test:" + gwPort})
		resp, err := http.DefaultClient.Do(ok)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("an allowed Host on 0.0.0.0 got %d", resp.StatusCode)
		}
	})
}
