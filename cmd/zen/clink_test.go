package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// fakeCLI writes an executable shell script named name into dir.
func fakeCLI(t *testing.T, dir, name, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestClinkRunsConfiguredCLIs(t *testing.T) {
	bin, conf, work := t.TempDir(), t.TempDir(), t.TempDir()
	stdinCopy := filepath.Join(work, "stdin.txt")
	fakeCLI(t, bin, "gemini", `cat > `+stdinCopy+`; echo "Loaded cached credentials."; echo '{"response": "GEMINI-ANSWER", "stats": {"models": {}}}'`)
	fakeCLI(t, bin, "codex", `cat > /dev/null; echo '{"type":"thread.started"}'; echo '{"type":"item.completed","item":{"type":"agent_message","text":"CODEX-ANSWER"}}'; echo '{"type":"turn.completed","usage":{"input_tokens":5}}'`)
	fakeCLI(t, bin, "claude", `cat > /dev/null; for a in "$@"; do [ "$a" = "--append-system-prompt" ] && sys=1; done; [ -n "$sys" ] || exit 3; echo '{"type":"result","result":"CLAUDE-ANSWER","is_error":false}'`)
	pidFile := filepath.Join(work, "child.pid")
	fakeCLI(t, bin, "slowcli", `sleep 30 & echo $! > `+pidFile+`; wait`)
	fakeCLI(t, bin, "bigcli", `cat > /dev/null; head -c 30000 /dev/zero | tr '\0' 'z'; echo; echo '<SUMMARY>the short version</SUMMARY>'`)
	fakeCLI(t, bin, "failcli", `cat > /dev/null; echo 'boom' >&2; exit 7`)
	writeFile(filepath.Join(conf, "extra.json"), `{"name": "slowcli", "command": "slowcli", "parser": "text", "timeout_seconds": 1}`)
	writeFile(filepath.Join(conf, "big.json"), `{"name": "bigcli", "command": "bigcli", "parser": "text"}`)
	writeFile(filepath.Join(conf, "fail.json"), `{"name": "failcli", "command": "failcli", "parser": "text"}`)
	writeFile(filepath.Join(conf, "ghost.json"), `{"name": "ghost", "command": "ghost-cli-that-is-not-installed", "parser": "text"}`)

	fake := fakemodel.New(t)
	env := mergeEnv(fakeEnv(fake), map[string]string{"PATH": bin + ":" + os.Getenv("PATH"), "CLI_CLIENTS_CONFIG_PATH": conf})
	st := serveStack(t, env)
	doc := filepath.Join(work, "notes.md")
	writeFile(doc, "# notes\n")

	res, got := callTool(t, st.session, "clink", map[string]any{"prompt": "CLINK-PROMPT review this", "cli_name": "gemini",
		"role": "codereviewer", "absolute_file_paths": []any{doc}})
	if res.IsError || got["status"] != "continuation_available" || got["content"] != "GEMINI-ANSWER" {
		t.Fatalf("gemini: %s", text(res))
	}
	meta := got["metadata"].(map[string]any)
	if meta["cli_name"] != "gemini" || meta["role"] != "codereviewer" || meta["parser"] != "gemini_json" || meta["provider_used"] != "gemini" {
		t.Errorf("metadata = %v", meta)
	}
	stdin, _ := os.ReadFile(stdinCopy)
	for _, want := range []string{"CLINK-PROMPT review this", "severity", doc, "gemini CLI agent"} {
		if !strings.Contains(string(stdin), want) {
			t.Errorf("the CLI's stdin lacks %q:\n%s", want, stdin)
		}
	}
	if strings.Contains(string(stdin), "# notes") {
		t.Error("clink embedded a file's content; the CLI reads files itself")
	}
	id := got["continuation_offer"].(map[string]any)["continuation_id"]
	res, _ = callTool(t, st.session, "clink", map[string]any{"prompt": "and now?", "cli_name": "gemini", "continuation_id": id})
	stdin, _ = os.ReadFile(stdinCopy)
	if res.IsError || !strings.Contains(string(stdin), "CLINK-PROMPT review this") || !strings.Contains(string(stdin), "GEMINI-ANSWER") {
		t.Errorf("a continued clink call should carry the history:\n%s", stdin)
	}
	for cli, want := range map[string]string{"codex": "CODEX-ANSWER", "claude": "CLAUDE-ANSWER"} {
		res, got = callTool(t, st.session, "clink", map[string]any{"prompt": "hi", "cli_name": cli})
		if res.IsError || got["content"] != want {
			t.Errorf("%s: %s", cli, text(res))
		}
	}
	res, got = callTool(t, st.session, "clink", map[string]any{"prompt": "hi", "cli_name": "bigcli"})
	if res.IsError || got["content"] != "the short version" || got["metadata"].(map[string]any)["output_summarized"] != true {
		t.Errorf("bigcli: %.300s", text(res))
	}

	start := time.Now()
	res, got = callTool(t, st.session, "clink", map[string]any{"prompt": "hi", "cli_name": "slowcli"})
	if !res.IsError || !strings.Contains(got["content"].(string), "timed out after 1 seconds") || time.Since(start) > 10*time.Second {
		t.Errorf("slowcli: %s", text(res))
	}
	raw, _ := os.ReadFile(pidFile)
	if pid, err := strconv.Atoi(strings.TrimSpace(string(raw))); err == nil {
		waitFor(t, 3*time.Second, "the timed-out CLI's child to be killed with its process tree", func() bool {
			return syscall.Kill(pid, 0) != nil
		})
	} else {
		t.Errorf("slowcli wrote no child pid: %q", raw)
	}

	for _, c := range []struct{ cli, want string }{
		{"failcli", "exited with status 7"},
		{"ghost", "not found on PATH"},
		{"nosuchcli", "cli_name"},
	} {
		res, got = callTool(t, st.session, "clink", map[string]any{"prompt": "hi", "cli_name": c.cli})
		if !res.IsError || got["status"] != "error" || !strings.Contains(got["content"].(string), c.want) {
			t.Errorf("%s: %s", c.cli, text(res))
		}
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("clink called a model %d times", n)
	}
}
