package main

import (
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func serveArgs() []string {
	return []string{"serve", "--mcp-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0"}
}

// continueChat continues a thread and returns the text the model was sent.
func continueChat(t *testing.T, st stack, fake *fakemodel.Server, id, prompt string) string {
	t.Helper()
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": prompt, "working_directory_absolute_path": t.TempDir(), "continuation_id": id})
	if res.IsError || got["continuation_offer"] == nil {
		t.Fatalf("continue %s: %s", id, text(res))
	}
	reqs := fake.Requests()
	return reqs[len(reqs)-1].AllText()
}

func TestConversationsSurviveARestart(t *testing.T) {
	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{"ZEN_DATA_DIR": t.TempDir()})
	first := startZen(t, env, []string{"mcp", "gateway"}, serveArgs()...)
	id := startChat(t, stack{session: connectHTTP(t, "http://"+first.addr("mcp")+"/mcp")}, "yesterday's question")
	first.stop()

	second := startZen(t, env, []string{"mcp", "gateway"}, serveArgs()...)
	st := stack{session: connectHTTP(t, "http://"+second.addr("mcp")+"/mcp"), gateway: "http://" + second.addr("gateway")}
	if sent := continueChat(t, st, fake, id, "today's follow-up"); !strings.Contains(sent, "yesterday's question") {
		t.Errorf("the restarted server lost the history:\n%s", sent)
	}
	if code, list := getJSON(t, st.gateway+"/v1/threads"); code != 200 || len(list["threads"].([]any)) != 1 {
		t.Errorf("threads after restart: %d %v", code, list)
	}
}

func TestKillNineLosesNoAcknowledgedTurn(t *testing.T) {
	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{"ZEN_DATA_DIR": t.TempDir()})
	p := startZen(t, env, []string{"mcp"}, serveArgs()...)
	st := stack{session: connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")}
	id := startChat(t, st, "acknowledged before the crash")
	continueChat(t, st, fake, id, "also acknowledged")
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.done

	again := startZen(t, env, []string{"mcp", "gateway"}, serveArgs()...)
	_, thread := getJSON(t, "http://"+again.addr("gateway")+"/v1/threads/"+id)
	if turns := thread["thread"].(map[string]any)["turns"].([]any); len(turns) != 4 {
		t.Fatalf("after kill -9 the thread has %d turns, want 4", len(turns))
	}
}

func TestTwoStdioProcessesShareThreads(t *testing.T) {
	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{"ZEN_DATA_DIR": t.TempDir()})
	stdio := func() stack {
		cmd := exec.Command(zenBin, "stdio")
		cmd.Env = baseEnv(t, env)
		cmd.Dir = t.TempDir()
		return stdioStackFrom(t, cmd)
	}
	a, b := stdio(), stdio()
	id := startChat(t, a, "asked in the first process")
	if sent := continueChat(t, b, fake, id, "continued in the second"); !strings.Contains(sent, "asked in the first process") {
		t.Errorf("the second process did not see the first's thread:\n%s", sent)
	}
	if sent := continueChat(t, a, fake, id, "and back in the first"); !strings.Contains(sent, "continued in the second") {
		t.Errorf("the first process did not see the second's turn:\n%s", sent)
	}
}
