package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/logtest"
)

// What SIGTERM does to the calls zen is running, and how soon an idle role
// exits (issue 12, item 2).

// callsInFlight is how many calls are running when zen is told to stop.
const callsInFlight = 10

// idleExitBound is how long an idle role may take to exit after SIGTERM.
// The aim is well under a second (docs/RELIABILITY.md has the figures); the
// bound leaves room for a loaded machine, and is far below the drain
// timeout a stuck stop would run into.
const idleExitBound = 3 * time.Second

// heldCall is one chat call whose model answer waits for a gate.
type heldCall struct {
	marker string
	res    *mcp.CallToolResult
	err    error
}

// startHeldCalls starts callsInFlight chat calls on cs and returns once
// each has reached the model, which answers none of them until release.
func startHeldCalls(t *testing.T, cs *mcp.ClientSession, fake *gatedModel) (release func(), calls <-chan heldCall) {
	t.Helper()
	out := make(chan heldCall, callsInFlight)
	var releases []func()
	var markers []string
	for i := range callsInFlight {
		marker := fmt.Sprintf("zen-shutdown-%d-%s", i, uuid.NewString())
		releases = append(releases, fake.hold(t, marker))
		markers = append(markers, marker)
		wd := t.TempDir()
		go func() {
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
				"prompt": "a question held open by " + marker, "working_directory_absolute_path": wd,
				"model": "llama3.2",
			}})
			out <- heldCall{marker: marker, res: res, err: err}
		}()
	}
	for _, m := range markers {
		fake.waitArrived(t, m)
	}
	return func() {
		for _, r := range releases {
			r()
		}
	}, out
}

// collect takes every held call's result and says what became of each:
// "answered" with its thread id, or what went wrong.
func collect(t *testing.T, calls <-chan heldCall) (got map[string]string, threads map[string]string) {
	t.Helper()
	got, threads = map[string]string{}, map[string]string{}
	for range callsInFlight {
		c := recv(t, "a call's answer after SIGTERM", calls)
		got[c.marker] = describeHeld(c)
		if got[c.marker] == "answered" {
			offer, _ := decode(c.res)["continuation_offer"].(map[string]any)
			threads[c.marker], _ = offer["continuation_id"].(string)
		}
	}
	return got, threads
}

func describeHeld(c heldCall) string {
	switch {
	case c.err != nil:
		return "failed: " + c.err.Error()
	case c.res.IsError || !strings.Contains(text(c.res), "answer for "+c.marker):
		return "no answer: " + text(c.res)
	}
	payload := decode(c.res)
	if meta, _ := payload["metadata"].(map[string]any); meta["continuation_error"] != nil {
		return fmt.Sprintf("answered, not saved: %v", meta["continuation_error"])
	}
	if _, ok := payload["continuation_offer"].(map[string]any); !ok {
		return "answered without a continuation offer"
	}
	return "answered"
}

// wantAnswered is what every held call should come to.
func wantAnswered(got map[string]string) map[string]string {
	want := map[string]string{}
	for marker := range got {
		want[marker] = "answered"
	}
	return want
}

// checkThreads starts zen serve again on env (its ZEN_DATA_DIR) and checks
// that each thread holds its exchange: the question and the model's answer.
func checkThreads(t *testing.T, env map[string]string, threads map[string]string) {
	t.Helper()
	p := startZen(t, env, []string{"gateway"}, serveArgs()...)
	got, want := map[string]string{}, map[string]string{}
	for marker, id := range threads {
		want[marker] = "2 turns, answer stored"
		code, body := getJSON(t, "http://"+p.addr("gateway")+"/v1/threads/"+id)
		thread, _ := body["thread"].(map[string]any)
		turns, _ := thread["turns"].([]any)
		got[marker] = fmt.Sprintf("HTTP %d, %d turns", code, len(turns))
		if code == 200 && len(turns) == 2 && strings.Contains(fmt.Sprint(turns[1]), "answer for "+marker) {
			got[marker] = "2 turns, answer stored"
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("threads after the restart (-want +got):\n%s", diff)
	}
}

func TestSIGTERMSavesCallsInFlight(t *testing.T) {
	t.Parallel()
	t.Run("serve", func(t *testing.T) {
		t.Parallel()
		fake := newGatedModel(t)
		env := mergeEnv(fakeEnv(fake.Server), map[string]string{"ZEN_DATA_DIR": t.TempDir()})
		p := startZen(t, env, []string{"mcp"}, serveArgs()...)
		cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
		release, calls := startHeldCalls(t, cs, fake)

		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// Once the MCP port refuses connections zen is stopping: only then
		// may the model answer.
		waitFor(t, 20*time.Second, "the MCP listener to close", func() bool {
			c, err := net.Dial("tcp", p.addr("mcp"))
			if err == nil {
				c.Close()
			}
			return err != nil
		})
		release()
		got, threads := collect(t, calls)
		if diff := cmp.Diff(wantAnswered(got), got); diff != "" {
			t.Errorf("calls in flight at SIGTERM (-want +got):\n%s\nzen's log:\n%s", diff, p.logText())
		}
		if err := recv(t, "zen to exit", p.done); err != nil {
			t.Errorf("zen exited with %v after SIGTERM, want 0\n%s", err, p.logText())
		}
		checkThreads(t, env, threads)
	})
	t.Run("stdio", func(t *testing.T) {
		t.Parallel()
		fake := newGatedModel(t)
		env := mergeEnv(fakeEnv(fake.Server), map[string]string{"ZEN_DATA_DIR": t.TempDir()})
		cmd := exec.Command(zenBin, "stdio")
		cmd.Env, cmd.Dir = baseEnv(t, env), t.TempDir()
		var stderr logtest.Buffer // written by exec's copier while the test reads it
		cmd.Stderr = &stderr
		cs := connect(t, &mcp.CommandTransport{Command: cmd})
		release, calls := startHeldCalls(t, cs, fake)

		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		// A stopping zen refuses new requests: only then may the model answer.
		waitFor(t, 20*time.Second, "zen stdio to refuse new requests",
			func() bool { return cs.Ping(t.Context(), nil) != nil })
		release()
		got, threads := collect(t, calls)
		if diff := cmp.Diff(wantAnswered(got), got); diff != "" {
			t.Errorf("calls in flight at SIGTERM (-want +got):\n%s\nzen's log:\n%s", diff, stderr.String())
		}
		_ = cs.Close()
		if cmd.ProcessState == nil || !cmd.ProcessState.Success() {
			t.Errorf("zen stdio ended with %v after SIGTERM, want exit 0\n%s", cmd.ProcessState, stderr.String())
		}
		checkThreads(t, env, threads)
	})
}

// stopTime sends SIGTERM to p and returns how long it took to exit, which
// must be cleanly.
func stopTime(t *testing.T, p *proc) time.Duration {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("exit after SIGTERM: %v\n%s", err, p.logText())
		}
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		t.Fatalf("no exit within 30 s of SIGTERM\n%s", p.logText())
	}
	return time.Since(start)
}

func TestIdleRolesStopPromptly(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	env := fakeEnv(fake)
	with := func(extra map[string]string) map[string]string { return mergeEnv(env, extra) }
	grpcOnly := []string{"grpc"}
	mem := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), grpcOnly, "memory")
	rt := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), grpcOnly, "router")
	ex := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0", "ZEN_ROUTER_ADDR": rt.addr("grpc")}),
		grpcOnly, "executor")
	addrs := with(map[string]string{
		"ZEN_MEMORY_ADDR": mem.addr("grpc"), "ZEN_ROUTER_ADDR": rt.addr("grpc"), "ZEN_EXECUTOR_ADDR": ex.addr("grpc"),
	})
	edge := startZen(t, addrs, []string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
	gw := startZen(t, addrs, []string{"gateway"}, "gateway", "--http-addr", "127.0.0.1:0")
	// One call and one inspection open every connection a cluster keeps:
	// the edge's to each role (and its health watch on memory), the
	// executor's to the router, the gateway's, and the clients'.
	startChat(t, stack{session: connectHTTP(t, "http://"+edge.addr("mcp")+"/mcp")}, "warm every connection")
	if code, _ := getJSON(t, "http://"+gw.addr("gateway")+"/v1/threads"); code != 200 {
		t.Fatalf("GET /v1/threads = %d", code)
	}
	solo := startZen(t, env, []string{"mcp", "gateway"}, serveArgs()...)
	startChat(t, stack{session: connectHTTP(t, "http://"+solo.addr("mcp")+"/mcp")}, "warm the single process")

	// Each inner role stops while the roles that call it are still up and
	// connected: memory while the edge watches its health.
	for _, r := range []struct {
		name string
		p    *proc
	}{{"memory", mem}, {"router", rt}, {"executor", ex}, {"gateway", gw}, {"edge", edge}, {"serve", solo}} {
		d := stopTime(t, r.p)
		t.Logf("%s: exited %v after SIGTERM", r.name, d.Round(time.Millisecond))
		if d > idleExitBound {
			t.Errorf("idle %s took %v to exit after SIGTERM, want under %v", r.name, d, idleExitBound)
		}
	}
}

// A memory replica that goes away while calls wait for the model (a rolling
// update) costs no exchange: the edge retries each save until memory
// answers again, here a new replica on the same address and data.
func TestSavesOutlastAMemoryRestart(t *testing.T) {
	t.Parallel()
	fake := newGatedModel(t)
	env := mergeEnv(fakeEnv(fake.Server), map[string]string{"ZEN_DATA_DIR": t.TempDir()})
	with := func(extra map[string]string) map[string]string { return mergeEnv(env, extra) }
	grpcOnly := []string{"grpc"}
	mem := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), grpcOnly, "memory")
	rt := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0"}), grpcOnly, "router")
	ex := startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": "127.0.0.1:0", "ZEN_ROUTER_ADDR": rt.addr("grpc")}),
		grpcOnly, "executor")
	edge := startZen(t, with(map[string]string{
		"ZEN_MEMORY_ADDR": mem.addr("grpc"), "ZEN_ROUTER_ADDR": rt.addr("grpc"), "ZEN_EXECUTOR_ADDR": ex.addr("grpc"),
	}), []string{"mcp"}, "edge", "--mcp-addr", "127.0.0.1:0")
	cs := connectHTTP(t, "http://"+edge.addr("mcp")+"/mcp")
	release, calls := startHeldCalls(t, cs, fake)

	stopTime(t, mem)
	release()
	// Memory comes back only once the edge has found it gone, so the saves
	// cannot simply have been late enough to find the new replica.
	waitFor(t, 20*time.Second, "the edge to retry a save (or a call to end)", func() bool {
		return strings.Contains(edge.logText(), "memory unavailable; retrying") || len(calls) > 0
	})
	startZen(t, with(map[string]string{"ZEN_GRPC_ADDR": mem.addr("grpc")}), grpcOnly, "memory")
	got, threads := collect(t, calls)
	if diff := cmp.Diff(wantAnswered(got), got); diff != "" {
		t.Errorf("calls whose memory restarted (-want +got):\n%s\nthe edge's log:\n%s", diff, edge.logText())
	}
	checkThreads(t, env, threads)
}

// A call that outlasts ZEN_DRAIN_TIMEOUT is cancelled, down to its model
// request, and answered, saying zen stopped; zen still exits cleanly.
func TestSIGTERMCutsACallPastTheDrainTimeout(t *testing.T) {
	t.Parallel()
	for _, s := range []struct {
		name  string
		start func(*testing.T, map[string]string) drainedZen
	}{{"serve", startServeProc}, {"stdio", startStdioProc}} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			fake := newGatedModel(t)
			z := s.start(t, mergeEnv(fakeEnv(fake.Server), map[string]string{"ZEN_DRAIN_TIMEOUT": "1s"}))
			marker := stallMarker + uuid.NewString()
			ended := make(chan string, 1) // how the call ended, or "" when it failed
			go func() {
				res, err := z.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
					"prompt": marker, "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"}})
				ended <- describeEnd(res, err)
			}()
			// A call that ends before it reaches the model says why at once,
			// not after the wait.
			waitFor(t, 20*time.Second, "a model request for "+marker, func() bool {
				select {
				case how := <-ended:
					t.Fatalf("the call ended before its model request: %s\nzen's log:\n%s", how, z.log())
				default:
				}
				return fake.find(marker, false)
			})
			if err := z.process().Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			fake.waitCancelled(t, marker)
			if how := recv(t, "the cut call to end", ended); !strings.Contains(how, "zen is stopping") {
				t.Errorf("a call cut at the drain timeout returned %s; want a tool error saying zen is stopping", how)
			}
			if err := z.exited(); err != nil {
				t.Errorf("zen exited with %v after SIGTERM, want 0\nzen's log:\n%s", err, z.log())
			}
		})
	}
}

// describeEnd says how a tool call ended: "failed: " and its error, or its
// result.
func describeEnd(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "failed: " + err.Error()
	}
	return fmt.Sprintf("a result (error %v): %s", res.IsError, text(res))
}

// drainedZen is a zen under test with its MCP session, for tests that stop
// it: its process, a wait for its exit, and what it logged.
type drainedZen struct {
	session *mcp.ClientSession
	process func() *os.Process
	exited  func() error
	log     func() string
}

// startServeProc runs zen serve.
func startServeProc(t *testing.T, env map[string]string) drainedZen {
	p := startZen(t, env, []string{"mcp"}, serveArgs()...)
	return drainedZen{
		session: connectHTTP(t, "http://"+p.addr("mcp")+"/mcp"),
		process: func() *os.Process { return p.cmd.Process },
		exited:  func() error { return recv(t, "zen to exit", p.done) },
		log:     p.logText,
	}
}

// startStdioProc runs zen stdio.
func startStdioProc(t *testing.T, env map[string]string) drainedZen {
	cmd := exec.Command(zenBin, "stdio")
	cmd.Env, cmd.Dir = baseEnv(t, env), t.TempDir()
	log := &logtest.Buffer{}
	cmd.Stderr = log
	cs := connect(t, &mcp.CommandTransport{Command: cmd})
	return drainedZen{
		session: cs,
		process: func() *os.Process { return cmd.Process },
		exited: func() error {
			_ = cs.Close() // waits for the process
			if !cmd.ProcessState.Success() {
				return fmt.Errorf("%v", cmd.ProcessState)
			}
			return nil
		},
		log: log.String,
	}
}
