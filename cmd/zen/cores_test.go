package main

import (
	"bufio"
	"context"
	"net/http"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// gomaxprocs is the GOMAXPROCS zen reports on /metrics at addr, or -1 when
// it reports none.
func gomaxprocs(t *testing.T, addr string) int {
	t.Helper()
	res, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	lines := bufio.NewScanner(res.Body)
	for lines.Scan() {
		if v, ok := strings.CutPrefix(lines.Text(), "go_sched_gomaxprocs_threads "); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("go_sched_gomaxprocs_threads %q", v)
			}
			return n
		}
	}
	return -1
}

// TestServeRunsOnOneCoreUntilCallsOverlap: zen serve, idle or answering
// one call at a time, runs on one core; calls that overlap give it more
// while they do (Go's own count: the cores, or a container's CPU limit),
// and it goes back to one once they end. A GOMAXPROCS the operator sets
// stands, in the environment or in a .env file, which the runtime itself
// does not read.
func TestServeRunsOnOneCoreUntilCallsOverlap(t *testing.T) {
	t.Parallel()
	if runtime.NumCPU() < 2 {
		t.Skip("one core: zen has no cores to give back or take")
	}
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "slow reply", Delay: 4 * time.Second}
	})
	env := mergeEnv(fakeEnv(fake), map[string]string{"ZEN_METRICS_ADDR": "127.0.0.1:0"})
	p := startZen(t, env, []string{"mcp", "metrics"}, serveArgs()...)
	metrics := p.addr("metrics")
	waitFor(t, 5*time.Second, "an idle zen serve to run on one core", func() bool { return gomaxprocs(t, metrics) == 1 })

	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	errs := make(chan error, 3)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
				"prompt": "hi", "model": "llama3.2", "working_directory_absolute_path": t.TempDir()}})
			if err == nil && res.IsError {
				err = &toolError{text(res)}
			}
			errs <- err
		})
	}
	waitFor(t, 3*time.Second, "overlapping calls to give zen more than one core", func() bool {
		return gomaxprocs(t, metrics) > 1
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a call failed: %v", err)
		}
	}
	waitFor(t, 3*time.Second, "zen to go back to one core", func() bool { return gomaxprocs(t, metrics) == 1 })
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "fast reply"} })

	for _, set := range []struct {
		where string
		env   map[string]string
		dir   func(t *testing.T) string
	}{
		{"the environment", map[string]string{"GOMAXPROCS": "2"}, func(t *testing.T) string { return t.TempDir() }},
		{"a .env file", nil, func(t *testing.T) string {
			dir := t.TempDir()
			if err := writeFile(dir+"/.env", "GOMAXPROCS=3\n"); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
	} {
		want := 2
		if set.env == nil {
			want = 3
		}
		p := startZenIn(t, set.dir(t), mergeEnv(env, set.env), []string{"mcp", "metrics"}, serveArgs()...)
		callTool(t, connectHTTP(t, "http://"+p.addr("mcp")+"/mcp"), "chat", map[string]any{
			"prompt": "hi", "model": "llama3.2", "working_directory_absolute_path": t.TempDir()})
		if n := gomaxprocs(t, p.addr("metrics")); n != want {
			t.Errorf("with GOMAXPROCS=%d in %s, zen runs with GOMAXPROCS %d", want, set.where, n)
		}
	}
}

type toolError struct{ text string }

func (e *toolError) Error() string { return "tool error: " + e.text }

// TestABadGOMAXPROCSStopsZen: the runtime ignores a GOMAXPROCS it cannot
// use without a word, and never reads one in a .env file; zen says what
// it wants instead, from either place.
func TestABadGOMAXPROCSStopsZen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ value, where string }{
		{"0", "the environment"}, {"abc", "the environment"}, {"-2", "a .env file"}, {"two", "a .env file"},
		{"200000", "a .env file"},
	} {
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		cmd := exec.CommandContext(ctx, zenBin, serveArgs()...)
		cmd.Dir = t.TempDir()
		env := map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1"}
		if tc.where == "a .env file" {
			if err := writeFile(cmd.Dir+"/.env", "GOMAXPROCS="+tc.value+"\n"); err != nil {
				t.Fatal(err)
			}
		} else {
			env["GOMAXPROCS"] = tc.value
		}
		cmd.Env = baseEnv(t, env)
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil || !strings.Contains(string(out), "GOMAXPROCS=\""+tc.value+"\": want a whole number") {
			t.Errorf("GOMAXPROCS=%s in %s: err %v, output %q; want a failure that says what it wants", tc.value,
				tc.where, err, out)
		}
	}
}
