package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zenmcp/zen/services/platform/childproc"
)

// zenBin is the binary under test, built once by TestMain.
var zenBin string

// zenHome is the home directory of every zen under test. The tests' own
// temporary directory is inside it, so what a test makes with t.TempDir()
// is a project in the user's home, as on a developer's machine, and the
// default file policy (the home is the root) applies unchanged.
var zenHome string

// builtZenEnv names, for a test binary a test starts, the zen binary its
// parent built, so that it need not build one of its own.
const builtZenEnv = "ZEN_E2E_BUILT_ZEN"

func TestMain(m *testing.M) {
	if url := os.Getenv(fakeProbeEnv); url != "" {
		os.Exit(probeFake(url, os.Getenv(fakeProbeBodyEnv))) // a benchmark's probe, not a test run
	}
	dir, err := os.MkdirTemp("", "zen-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// The binary sits beside the home, not in it: zen never scans its own
	// directory.
	zenBin = filepath.Join(dir, "bin", "zen")
	if bin := os.Getenv(builtZenEnv); bin != "" {
		zenBin = bin // a test binary that a test started (TestNoZenOutlivesItsTestBinary)
	} else {
		build := exec.Command("go", "build", "-ldflags", "-X main.updated="+stampedDate, "-o", zenBin, ".")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build zen:", err)
			os.Exit(1)
		}
	}
	zenHome = filepath.Join(dir, "home")
	tmp := filepath.Join(zenHome, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Setenv("TMPDIR", tmp) // where t.TempDir() makes its directories
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// proc is a running zen process.
type proc struct {
	t     testing.TB
	cmd   *exec.Cmd
	mu    sync.Mutex
	addrs map[string]string
	log   strings.Builder
	ready chan struct{}
	done  chan error
}

// baseEnv is what every zen under test gets: no variables from the
// developer's shell, the shared home, and state and configuration
// directories of its own, so no two zens share threads.
func baseEnv(t testing.TB, extra map[string]string) []string {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + zenHome, "XDG_STATE_HOME=" + t.TempDir(),
		"XDG_CONFIG_HOME=" + t.TempDir(), "LOG_LEVEL=INFO"}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}

// startZen runs zen with args and waits until the named listeners are up.
// At the end of the test it sends SIGTERM and checks zen exits 0.
func startZen(t testing.TB, env map[string]string, listeners []string, args ...string) *proc {
	t.Helper()
	return startZenIn(t, t.TempDir(), env, listeners, args...)
}

// startZenIn is startZen with dir as zen's working directory (where it
// finds its .env).
func startZenIn(t testing.TB, dir string, env map[string]string, listeners []string, args ...string) *proc {
	t.Helper()
	return startBinIn(t, zenBin, dir, env, listeners, args...)
}

// startBinIn is startZenIn for another binary that logs as zen does.
func startBinIn(t testing.TB, bin, dir string, env map[string]string, listeners []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, addrs: map[string]string{}, ready: make(chan struct{}), done: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.SysProcAttr = childproc.DiesWithParent()
	p.cmd.Env = baseEnv(t, env)
	p.cmd.Dir = dir
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go p.readLog(stderr, listeners)
	go func() { p.done <- p.cmd.Wait() }()
	select {
	case <-p.ready:
	case err := <-p.done:
		t.Fatalf("%s %s exited early (%v):\n%s", filepath.Base(bin), strings.Join(args, " "), err, p.logText())
	case <-time.After(60 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("%s %s did not start listening on %v:\n%s", filepath.Base(bin), strings.Join(args, " "), listeners,
			p.logText())
	}
	t.Cleanup(func() { p.stop() })
	return p
}

func (p *proc) readLog(r io.Reader, want []string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	signalled := false
	for sc.Scan() {
		line := sc.Text()
		var rec struct {
			Msg, Listener, Addr string
		}
		_ = json.Unmarshal([]byte(line), &rec)
		p.mu.Lock()
		p.log.WriteString(line + "\n")
		if rec.Msg == "listening" {
			p.addrs[rec.Listener] = rec.Addr
		}
		all := true
		for _, w := range want {
			all = all && p.addrs[w] != ""
		}
		p.mu.Unlock()
		if all && !signalled {
			signalled = true
			close(p.ready)
		}
	}
}

func (p *proc) logText() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

func (p *proc) addr(listener string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.addrs[listener]
}

// stop sends SIGTERM and expects a clean exit.
func (p *proc) stop() {
	if p.cmd.ProcessState != nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			p.t.Errorf("%s did not exit cleanly on SIGTERM: %v\n%s", filepath.Base(p.cmd.Path), err, p.logText())
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		p.t.Errorf("%s did not stop within 30s of SIGTERM\n%s", filepath.Base(p.cmd.Path), p.logText())
	}
}

// connectHTTP opens an MCP client session to a streamable HTTP endpoint.
func connectHTTP(t testing.TB, url string) *mcp.ClientSession {
	t.Helper()
	return connect(t, &mcp.StreamableClientTransport{Endpoint: url})
}

func connect(t testing.TB, transport mcp.Transport) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "zen-e2e", Version: "1"}, nil)
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// callTool calls a tool and returns its result and its text decoded as JSON
// (nil when the text is not JSON).
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, map[string]any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: %v", name, err)
	}
	return res, decode(res)
}

func text(res *mcp.CallToolResult) string {
	if len(res.Content) == 0 {
		return ""
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); ok {
		return tc.Text
	}
	return ""
}

func decode(res *mcp.CallToolResult) map[string]any {
	var m map[string]any
	if json.Unmarshal([]byte(text(res)), &m) != nil {
		return nil
	}
	return m
}

// getJSON fetches a gateway path and decodes the answer.
func getJSON(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

func writeFile(path, content string) error { return os.WriteFile(path, []byte(content), 0o644) }

// waitFor polls cond until it holds, failing the test after within: the one
// way these tests wait for what another process does.
func waitFor(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(within)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("waited %s for %s", within, what)
		case <-tick.C:
		}
	}
}
