package main

import (
	"context"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// TestRedisWithoutPersistence: zen warns of a Redis that keeps nothing on
// disk, and when such a Redis restarts empty it says so: in its log, its
// metrics and to the client continuing a lost thread, instead of calling
// the thread expired.
func TestRedisWithoutPersistence(t *testing.T) {
	rds := redistest.StartWith(t, redistest.NoPersistence...)
	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{"REDIS_URL": rds.URL(), "ZEN_METRICS_ADDR": "127.0.0.1:0"})
	p := startZen(t, env, []string{"mcp", "gateway", "metrics"}, serveArgs()...)
	st := stack{session: connectHTTP(t, "http://"+p.addr("mcp")+"/mcp"), gateway: "http://" + p.addr("gateway")}
	waitReady(t, st.gateway)
	for _, base := range []string{st.gateway, "http://" + p.addr("mcp")} {
		code, ready := getJSON(t, base+"/readyz")
		if w, _ := ready["warning"].(string); code != 200 || !strings.Contains(w, "without persistence") {
			t.Errorf("%s/readyz = %d %v, want ready with a warning of no persistence", base, code, ready)
		}
	}
	waitFor(t, 10*time.Second, "the log to warn of a Redis without persistence", func() bool {
		return strings.Contains(p.logText(), "without persistence")
	})

	id := startChat(t, st, "said before the loss")
	rds.Stop()
	rds.Restart(t) // empty: it kept nothing
	before := len(fake.Requests())
	res, _ := callTool(t, st.session, "chat", map[string]any{
		"prompt": "continue", "working_directory_absolute_path": t.TempDir(), "continuation_id": id})
	msg := text(res)
	if !res.IsError || !strings.Contains(msg, "lost its data") || strings.Contains(msg, "expired") {
		t.Errorf("continuing a lost thread: IsError %v, %q; want it called lost, not expired", res.IsError, msg)
	}
	if n := len(fake.Requests()) - before; n != 0 {
		t.Errorf("the lost thread's call reached the model %d times", n)
	}
	// The log is read from zen's stderr as it comes: wait for the line
	// rather than race the reader.
	waitFor(t, 10*time.Second, "the log to report the loss", func() bool {
		return strings.Contains(p.logText(), "redis lost its data")
	})
	resp, err := http.Get("http://" + p.addr("metrics") + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(body), "zen_memory_redis_data_losses_total") {
		t.Error("/metrics does not count the loss")
	}
}

// TestRequireDurableRedis: with ZEN_REQUIRE_DURABLE_REDIS=true, a Redis
// that keeps nothing on disk is a startup error naming the variable.
func TestRequireDurableRedis(t *testing.T) {
	rds := redistest.StartWith(t, redistest.NoPersistence...)
	for _, args := range [][]string{serveArgs(), {"memory", "--grpc-addr", "127.0.0.1:0"}} {
		// A zen that starts anyway is stopped when the test gives up on it.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, zenBin, args...)
		cmd.Env = baseEnv(t, map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1", "REDIS_URL": rds.URL(),
			"ZEN_REQUIRE_DURABLE_REDIS": "true"})
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), "ZEN_REQUIRE_DURABLE_REDIS") {
			t.Errorf("zen %s: err %v, output %q; want a startup error naming ZEN_REQUIRE_DURABLE_REDIS", args[0], err, out)
		}
	}
}
