package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// logRecord is a log line as these tests read it: the common keys and
// those of the line each tool call leaves.
type logRecord struct {
	Level        string  `json:"level"`
	Msg          string  `json:"msg"`
	Tool         string  `json:"tool"`
	Model        string  `json:"model"`
	Provider     string  `json:"provider"`
	InputTokens  int     `json:"input_tokens"`
	OutputTokens int     `json:"output_tokens"`
	ThreadID     string  `json:"thread_id"`
	TraceID      string  `json:"trace_id"`
	Client       string  `json:"client"`
	Outcome      string  `json:"outcome"`
	Origin       string  `json:"origin"`
	Backend      string  `json:"backend"`
	DurationMS   float64 `json:"duration_ms"`
}

// logRecords decodes the JSON lines of a log, skipping anything else.
func logRecords(text string) []logRecord {
	var out []logRecord
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r logRecord
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Msg != "" {
			out = append(out, r)
		}
	}
	return out
}

// callLines are the lines tool calls left in a log.
func callLines(text string) []logRecord {
	return slices.DeleteFunc(logRecords(text), func(r logRecord) bool { return r.Msg != "tool call" })
}

// ignoreDuration leaves the call's duration to its own check.
var ignoreDuration = cmpopts.IgnoreFields(logRecord{}, "DurationMS")

// A successful call leaves one INFO line under its trace id saying what it
// did; a failed one leaves one line too, at WARN, and nothing else does.
func TestServeLogsOneLinePerToolCall(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		if strings.Contains(r.AllText(), "refuse this") {
			return fakemodel.Reply{Status: 400, Message: "the prompt is not acceptable"}
		}
		return fakemodel.Reply{Content: "an answer", PromptTokens: 123, CompletionTokens: 45}
	})
	p := startZen(t, fakeEnv(fake), []string{"mcp"}, "serve", "--mcp-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0",
		"--grpc-addr", "127.0.0.1:0")
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	wd := t.TempDir()

	res, got := callTool(t, cs, "chat", map[string]any{"prompt": "a question", "model": "local-llama",
		"working_directory_absolute_path": wd})
	if res.IsError || got == nil {
		t.Fatalf("chat failed: %s", text(res))
	}
	meta, _ := got["metadata"].(map[string]any)
	offer, _ := got["continuation_offer"].(map[string]any)
	traceID, _ := meta["trace_id"].(string)
	threadID, _ := offer["continuation_id"].(string)
	if traceID == "" || threadID == "" {
		t.Fatalf("no trace id or thread in %v", got)
	}
	waitFor(t, 10*time.Second, "the call's log line", func() bool { return len(callLines(p.logText())) == 1 })
	want := logRecord{Level: "INFO", Msg: "tool call", Tool: "chat", Model: "llama3.2", Provider: "custom",
		InputTokens: 123, OutputTokens: 45, ThreadID: threadID, TraceID: traceID, Client: "zen-e2e 1", Outcome: "ok"}
	line := callLines(p.logText())[0]
	if diff := cmp.Diff(want, line, ignoreDuration); diff != "" {
		t.Errorf("the call's log line (-want +got):\n%s", diff)
	}
	if line.DurationMS <= 0 {
		t.Errorf("duration_ms = %v, want the call's time", line.DurationMS)
	}

	res, _ = callTool(t, cs, "chat", map[string]any{"prompt": "refuse this", "model": "local-llama",
		"working_directory_absolute_path": wd, "continuation_id": threadID})
	if !res.IsError {
		t.Fatalf("a refused prompt succeeded: %s", text(res))
	}
	waitFor(t, 10*time.Second, "the failed call's log line", func() bool { return len(callLines(p.logText())) == 2 })
	failed := callLines(p.logText())[1]
	want = logRecord{Level: "WARN", Msg: "tool call", Tool: "chat", Model: "llama3.2", Provider: "custom",
		ThreadID: threadID, TraceID: failed.TraceID, Client: "zen-e2e 1", Outcome: "tool_error", Origin: "PROVIDER_ERROR",
		Backend: "executor"}
	if diff := cmp.Diff(want, failed, ignoreDuration); diff != "" || failed.TraceID == "" || failed.TraceID == traceID {
		t.Errorf("the failed call's log line (-want +got):\n%s\ntrace id %q", diff, failed.TraceID)
	}
	for _, r := range logRecords(p.logText()) {
		if r.Msg == "tool call failed" {
			t.Errorf("a second line for the failed call: %+v", r)
		}
	}
}

// sdkSessionLines are what the MCP SDK logs for every session, which over
// stateless HTTP is every request.
var sdkSessionLines = []string{"server connecting", "server session connected", "session initialized",
	"server session disconnected", "server session ended"}

// The SDK's per-request session lines are DEBUG detail, not INFO noise.
func TestSDKSessionLinesAreDebug(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	p := startZen(t, mergeEnv(fakeEnv(fake), map[string]string{"LOG_LEVEL": "DEBUG"}), []string{"mcp"}, "serve",
		"--mcp-addr", "127.0.0.1:0", "--http-addr", "127.0.0.1:0", "--grpc-addr", "127.0.0.1:0")
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	callTool(t, cs, "version", nil)
	sessionLines := func() []logRecord {
		return slices.DeleteFunc(logRecords(p.logText()), func(r logRecord) bool {
			return !slices.Contains(sdkSessionLines, r.Msg)
		})
	}
	waitFor(t, 10*time.Second, "the SDK's session lines", func() bool { return len(sessionLines()) > 0 })
	for _, r := range sessionLines() {
		if r.Level != "DEBUG" {
			t.Errorf("the SDK's %q is logged at %s, want DEBUG", r.Msg, r.Level)
		}
	}
}

// Over stdio the log also goes to a file under the state directory (the
// agent hides zen's stderr), or where ZEN_LOG_FILE says; a full file is
// rotated, and no secret reaches it.
func TestStdioLogsToARotatingFile(t *testing.T) {
	t.Parallel()
	const key = "sk-log-secret-7c1f9a2e4b"
	for _, tc := range []struct {
		name string
		env  func(state string) map[string]string
		file func(state string) string
	}{
		{
			name: "state directory",
			env:  func(state string) map[string]string { return map[string]string{"XDG_STATE_HOME": state} },
			file: func(state string) string { return filepath.Join(state, "zen", "zen.log") },
		},
		{
			name: "ZEN_LOG_FILE",
			env: func(state string) map[string]string {
				return map[string]string{"XDG_STATE_HOME": state, "ZEN_LOG_FILE": filepath.Join(state, "logs", "mine.log")}
			},
			file: func(state string) string { return filepath.Join(state, "logs", "mine.log") },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			state := t.TempDir()
			file := tc.file(state)
			// A full log from an earlier run: zen's first line rotates it.
			if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte("an earlier run\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(file, 10<<20); err != nil {
				t.Fatal(err)
			}
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
				return fakemodel.Reply{Status: 400, Message: "bad key " + key}
			})
			env := mergeEnv(mergeEnv(fakeEnv(fake), map[string]string{"CUSTOM_API_KEY": key}), tc.env(state))
			cmd := exec.Command(zenBin, "stdio")
			cmd.Env = baseEnv(t, env)
			cmd.Dir = t.TempDir()
			st := stdioStackFrom(t, cmd)
			res, _ := callTool(t, st.session, "chat", map[string]any{"prompt": "hello", "model": "local-llama",
				"working_directory_absolute_path": t.TempDir()})
			if !res.IsError {
				t.Fatalf("the provider's refusal did not fail the call: %s", text(res))
			}
			read := func() string {
				b, _ := os.ReadFile(file)
				return string(b)
			}
			waitFor(t, 10*time.Second, "the call's line in "+file, func() bool { return len(callLines(read())) == 1 })
			log := read()
			if line := callLines(log)[0]; line.Tool != "chat" || line.TraceID == "" || line.Outcome != "tool_error" {
				t.Errorf("the call's line in the file: %+v", line)
			}
			if strings.Contains(log, key) {
				t.Errorf("the provider key reached the log file:\n%s", log)
			}
			old, err := os.ReadFile(file + ".1")
			if err != nil || !strings.HasPrefix(string(old), "an earlier run\n") || len(old) != 10<<20 {
				t.Errorf("the full log was not rotated to %s.1 (%d bytes, %v)", file, len(old), err)
			}
		})
	}
}
