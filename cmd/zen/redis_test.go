package main

import (
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// serveOn starts zen serve on env's store and waits until it is ready:
// memory serves once it has reached Redis, and a call before that is told
// to try again (which made the tests that call at once fail now and then).
func serveOn(t *testing.T, env map[string]string) (*proc, stack) {
	p, st := serveUnready(t, env)
	waitReady(t, st.gateway)
	return p, st
}

// serveUnready is serveOn without the wait, for a store that is down.
func serveUnready(t *testing.T, env map[string]string) (*proc, stack) {
	p := startZen(t, env, []string{"mcp", "gateway"}, serveArgs()...)
	return p, stack{session: connectHTTP(t, "http://"+p.addr("mcp")+"/mcp"), gateway: "http://" + p.addr("gateway")}
}

func TestRedisEdgesShareThreads(t *testing.T) {
	rds := redistest.Start(t)
	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{"REDIS_URL": rds.URL(), "ZEN_MEMORY_COMPRESS": "true"})
	_, a := serveOn(t, env)
	_, b := serveOn(t, env)
	id := startChat(t, a, "started on replica a")
	if sent := continueChat(t, b, fake, id, "continued on replica b"); !strings.Contains(sent, "started on replica a") {
		t.Errorf("replica b did not see replica a's thread:\n%s", sent)
	}
	_, list := getJSON(t, a.gateway+"/v1/threads")
	threads := list["threads"].([]any)
	if len(threads) != 1 || threads[0].(map[string]any)["turn_count"] != 4.0 {
		t.Errorf("replica a lists %v, want the one thread with 4 turns", threads)
	}
}

func TestRedisKillNineLosesNoAcknowledgedTurn(t *testing.T) {
	rds := redistest.Start(t)
	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{"REDIS_URL": rds.URL()})
	p, st := serveOn(t, env)
	id := startChat(t, st, "acknowledged")
	continueChat(t, st, fake, id, "acknowledged too")
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	// Redis itself crashing after the acknowledgement loses nothing either:
	// it fsyncs its append-only file on every write.
	rds.Stop()
	rds.Restart(t)
	_, again := serveOn(t, env)
	_, thread := getJSON(t, again.gateway+"/v1/threads/"+id)
	if turns := thread["thread"].(map[string]any)["turns"].([]any); len(turns) != 4 {
		t.Fatalf("after kill -9 the thread has %d turns, want 4", len(turns))
	}
}

func TestRedisOutageIsClearAndRecovers(t *testing.T) {
	rds := redistest.Start(t)
	fake := fakemodel.New(t)
	_, st := serveOn(t, mergeEnv(fakeEnv(fake), map[string]string{"REDIS_URL": rds.URL()}))
	id := startChat(t, st, "before the outage")
	rds.Stop()

	res, err := st.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
		"prompt": "during the outage", "working_directory_absolute_path": t.TempDir(), "continuation_id": id}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "memory service is unavailable") {
		t.Errorf("continuing during the outage: err = %v, result %v; want a tool error naming the memory service "+
			"unavailable", err, res)
	}
	if code, body := getJSON(t, st.gateway+"/v1/threads/"+id); code != 503 {
		t.Errorf("GET thread during the outage: %d %v, want 503", code, body)
	}

	rds.Restart(t)
	waitReady(t, st.gateway)
	if sent := continueChat(t, st, fake, id, "after the outage"); !strings.Contains(sent, "before the outage") {
		t.Errorf("after Redis came back the history is gone:\n%s", sent)
	}
}

// TestRedisDownAtStart: zen starts without its Redis, says so, is not
// ready, refuses calls clearly, and serves once Redis comes.
func TestRedisDownAtStart(t *testing.T) {
	rds := redistest.Start(t)
	rds.Stop()
	fake := fakemodel.New(t)
	p, st := serveUnready(t, mergeEnv(fakeEnv(fake), map[string]string{"REDIS_URL": rds.URL()}))
	if !strings.Contains(p.logText(), "redis is not answering yet") {
		t.Errorf("the log does not say Redis is down:\n%s", p.logText())
	}
	if code, _ := getJSON(t, st.gateway+"/readyz"); code != 503 {
		t.Errorf("readyz with Redis down = %d, want 503", code)
	}
	res, err := st.session.CallTool(context.Background(), &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
		"prompt": "too early", "model": "llama3.2", "working_directory_absolute_path": t.TempDir()}})
	if err != nil || !res.IsError || !strings.Contains(text(res), "memory service is unavailable") {
		t.Errorf("a call with Redis down: %v %v, want a tool error naming the memory service unavailable", err, res)
	}
	rds.Restart(t)
	waitReady(t, st.gateway)
	if id := startChat(t, st, "now it works"); id == "" {
		t.Error("no thread after Redis came up")
	}
	if strings.Contains(p.logText(), "pool.go") {
		t.Error("go-redis writes its own unstructured log lines")
	}
}

// waitReady waits for a zen HTTP listener's /readyz to say ready.
func waitReady(t *testing.T, base string) {
	t.Helper()
	waitFor(t, 15*time.Second, base+" to be ready", func() bool {
		code, _ := getJSON(t, base+"/readyz")
		return code == 200
	})
}
