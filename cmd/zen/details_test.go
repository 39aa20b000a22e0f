package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/reply"
)

// The details a user trips on (issue 14, item 11), each as the user meets
// it: the command line, the replies an agent reads, the gateway, the log.

func TestHelpExitsZero(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"serve", "--help"}, {"stdio", "-h"}, {"health", "--help"}} {
		cmd := exec.Command(zenBin, args...)
		cmd.Env = baseEnv(t, nil)
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err != nil || strings.Contains(string(out), "help requested") || !strings.Contains(string(out), "Usage of zen") {
			t.Errorf("zen %s: %v, want exit 0 with the flags and nothing else:\n%s", strings.Join(args, " "), err, out)
		}
	}
}

// TestModelUsedIsTheCanonicalName: the reply names the model that
// answered by its canonical name whether the call named an alias, named
// nothing (inheriting the thread's model), or ran a workflow; the alias the
// caller used goes beside it.
func TestModelUsedIsTheCanonicalName(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	wd := t.TempDir()
	metadata := func(got map[string]any) map[string]any {
		t.Helper()
		meta, _ := got["metadata"].(map[string]any)
		delete(meta, "trace_id")
		delete(meta, "usage")
		return meta
	}
	_, first := callTool(t, st.session, "chat", map[string]any{"prompt": "q1", "working_directory_absolute_path": wd,
		"model": "local-llama"})
	want := map[string]any{"tool_name": "chat", "conversation_ready": true, "model_used": "llama3.2",
		"requested_model": "local-llama", "provider_used": "custom"}
	if diff := cmp.Diff(want, metadata(first)); diff != "" {
		t.Errorf("first call's metadata (-want +got):\n%s", diff)
	}
	id := first["continuation_offer"].(map[string]any)["continuation_id"].(string)
	_, next := callTool(t, st.session, "chat", map[string]any{"prompt": "q2", "working_directory_absolute_path": wd,
		"continuation_id": id})
	delete(want, "requested_model") // it named none
	if diff := cmp.Diff(want, metadata(next)); diff != "" {
		t.Errorf("continuation's metadata (-want +got):\n%s", diff)
	}
	_, step := callTool(t, st.session, "debug", map[string]any{"step": "look", "step_number": 1, "total_steps": 2,
		"next_step_required": true, "findings": "none yet", "model": "ollama-llama"})
	want = map[string]any{"tool_name": "debug", "model_used": "llama3.2", "requested_model": "ollama-llama",
		"provider_used": "custom"}
	if diff := cmp.Diff(want, metadata(step)); diff != "" {
		t.Errorf("workflow step's metadata (-want +got):\n%s", diff)
	}
}

func TestProviderErrorNamesTheProviderOnce(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Status: 400, Message: "bad request"} })
	st := serveStack(t, fakeEnv(fake))
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "q",
		"working_directory_absolute_path": t.TempDir(), "model": "llama3.2"})
	msg, _ := got["content"].(string)
	if !res.IsError || !strings.Contains(msg, "Custom API error for model llama3.2: HTTP 400") ||
		strings.Contains(msg, "API API") {
		t.Errorf("provider error = %q, want it to name the Custom API once", msg)
	}
}

// TestTurnsAreCountedInTurns: remaining_turns, the offer's note and what
// the model is told all count turns, and agree, in reply.TurnsLeft's words;
// the history's header and its closing line say where the conversation
// stands the same way.
func TestTurnsAreCountedInTurns(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	wd := t.TempDir()
	check := func(got map[string]any, want int, sent string) string {
		t.Helper()
		offer, _ := got["continuation_offer"].(map[string]any)
		note, _ := offer["note"].(string)
		turns := regexp.MustCompile(`\b` + strconv.Itoa(want) + ` more turns\b`)
		said := reply.TurnsLeft(want)
		if offer["remaining_turns"] != float64(want) || !turns.MatchString(note) || strings.Contains(note, "exchanges") ||
			!strings.Contains(note, said) {
			t.Errorf("offer = %v, want %d remaining turns, said as %q", offer, want, said)
		}
		if !turns.MatchString(sent) || strings.Contains(sent, "exchanges remain") ||
			strings.Contains(sent, "more exchanges") || !strings.Contains(oneLine(sent), said) {
			t.Errorf("the model was not told %d more turns:\n%s", want, sent)
		}
		return offer["continuation_id"].(string)
	}
	_, got := callTool(t, st.session, "chat", map[string]any{"prompt": "q1", "working_directory_absolute_path": wd,
		"model": "llama3.2"})
	id := check(got, 48, fake.Requests()[0].AllText())
	_, got = callTool(t, st.session, "chat", map[string]any{"prompt": "q2", "working_directory_absolute_path": wd,
		"continuation_id": id})
	sent := fake.Requests()[1].AllText()
	check(got, 46, sent)
	for _, want := range []string{"Turns so far: 2 of at most 50\n", "This is turn 3 of the conversation"} {
		if !strings.Contains(sent, want) {
			t.Errorf("the history lacks %q:\n%s", want, sent)
		}
	}
	if strings.Contains(sent, "Turn 2/50") {
		t.Errorf("the history's header reads as the turn it is on:\n%s", sent)
	}
}

// TestEveryErrorIsAnEnvelope: an unknown thread is answered in the same
// JSON envelope as other errors, and a workflow's failure carries its
// message under content like every other error (and under error, as the
// reference's workflows did).
func TestEveryErrorIsAnEnvelope(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	unknown := uuid.NewString()
	notFound := "Conversation thread '" + unknown + "' was not found or has expired"
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "q",
		"working_directory_absolute_path": t.TempDir(), "continuation_id": unknown})
	content, _ := got["content"].(string)
	if !res.IsError || got["status"] != "error" || got["content_type"] != "text" || !strings.HasPrefix(content, notFound) {
		t.Errorf("chat on an unknown thread: %s", text(res))
	}
	res, got = callTool(t, st.session, "debug", map[string]any{"step": "s", "step_number": 2, "total_steps": 2,
		"next_step_required": false, "findings": "f", "continuation_id": unknown, "model": "llama3.2"})
	content, _ = got["content"].(string)
	if !res.IsError || got["status"] != "debug_failed" || !strings.HasPrefix(content, notFound) ||
		got["error"] != content || got["step_number"] != 2.0 {
		t.Errorf("debug on an unknown thread: %s", text(res))
	}
	res, got = callTool(t, st.session, "debug", map[string]any{"step": "s", "step_number": 1, "total_steps": 1,
		"next_step_required": true, "model": "llama3.2"})
	content, _ = got["content"].(string)
	if !res.IsError || got["status"] != "debug_failed" || !strings.Contains(content, "findings") ||
		got["error"] != content {
		t.Errorf("debug without findings: %s", text(res))
	}
}

// TestHistoryPreviewUsesTheThreadsModel: without ?model= the gateway shows
// what the thread's own model would see, not auto mode's pick.
func TestHistoryPreviewUsesTheThreadsModel(t *testing.T) {
	catalogue := filepath.Join(t.TempDir(), "custom.json")
	model := func(name string, score, window int) map[string]any {
		return map[string]any{"model_name": name, "intelligence_score": score, "context_window": window,
			"max_output_tokens": 4000, "temperature_constraint": "range"}
	}
	raw, _ := json.Marshal(map[string]any{"models": []any{model("small-model", 3, 16000), model("big-model", 15, 200000)}})
	if err := os.WriteFile(catalogue, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	st := serveStack(t, mergeEnv(fakeEnv(fakemodel.New(t)), map[string]string{"CUSTOM_MODELS_CONFIG_PATH": catalogue}))
	_, got := callTool(t, st.session, "chat", map[string]any{"prompt": "q", "working_directory_absolute_path": t.TempDir(),
		"model": "small-model"})
	id := got["continuation_offer"].(map[string]any)["continuation_id"].(string)
	code, preview := getJSON(t, st.gateway+"/v1/threads/"+id+"/history")
	if code != 200 || preview["model"] != "small-model" || preview["context_window"] != 16000.0 {
		t.Errorf("history without ?model= = %d %v, want the thread's small-model", code, preview)
	}
	code, preview = getJSON(t, st.gateway+"/v1/threads/"+id+"/history?model=big-model")
	if code != 200 || preview["model"] != "big-model" {
		t.Errorf("history?model=big-model = %d %v", code, preview)
	}
}

// TestTurnTimesSayWhenEachWasSaid: the stored request carries the time the
// call came in, its reply the time the answer was done.
func TestTurnTimesSayWhenEachWasSaid(t *testing.T) {
	const think = 300 * time.Millisecond
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "slow answer", Delay: think} })
	st := serveStack(t, fakeEnv(fake))
	before := time.Now()
	id := startChat(t, st, "a question")
	after := time.Now()
	_, thread := getJSON(t, st.gateway+"/v1/threads/"+id)
	turns := thread["thread"].(map[string]any)["turns"].([]any)
	at := make([]time.Time, len(turns))
	for i, turn := range turns {
		var err error
		if at[i], err = time.Parse(time.RFC3339Nano, turn.(map[string]any)["timestamp"].(string)); err != nil {
			t.Fatal(err)
		}
	}
	if len(at) != 2 || at[0].Before(before.Add(-time.Second)) || at[1].Sub(at[0]) < think ||
		at[1].After(after.Add(time.Second)) {
		t.Errorf("turn times %v for a call from %v to %v: want the request at the start, the reply %v or more later",
			at, before, after, think)
	}
}

func TestStartupLogGivesTheMCPURL(t *testing.T) {
	t.Parallel()
	p := startZen(t, fakeEnv(fakemodel.New(t)), []string{"mcp", "gateway", "grpc"}, serveArgs()...)
	var found bool
	for _, line := range strings.Split(p.logText(), "\n") {
		var rec struct{ Msg, Listener, Addr, URL string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" && rec.Listener == "mcp" {
			found = rec.URL == "http://"+rec.Addr+"/mcp"
			if !found {
				t.Errorf("the MCP listener's log line gives no URL with /mcp: %s", line)
			}
		}
	}
	if !found {
		t.Errorf("no listening line for mcp:\n%s", p.logText())
	}
}

// TestSlashCommandsOfferWhatTheirToolTakes: listmodels and version take no
// model, and a command given no thinking mode leaves the tool's default
// (thinkdeep's is high) rather than setting one of its own.
func TestSlashCommandsOfferWhatTheirToolTakes(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	list, err := st.session.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string][]string{}
	var thinkdeeperMode string
	for _, p := range list.Prompts {
		for _, a := range p.Arguments {
			args[p.Name] = append(args[p.Name], a.Name)
			if p.Name == "thinkdeeper" && a.Name == "thinking_mode" {
				thinkdeeperMode = a.Description
			}
		}
	}
	for name, want := range map[string][]string{"listmodels": nil, "version": nil, "planner": nil,
		"thinkdeeper": {"model", "thinking_mode"}, "chat": {"model", "thinking_mode"}} {
		if !slices.Equal(args[name], want) {
			t.Errorf("/%s offers %v, want %v", name, args[name], want)
		}
	}
	if !strings.Contains(thinkdeeperMode, "high") || strings.Contains(thinkdeeperMode, "medium)") {
		t.Errorf("thinkdeeper's thinking_mode says %q, want thinkdeep's default, high", thinkdeeperMode)
	}
	say := func(mode string) string {
		got, err := st.session.GetPrompt(t.Context(), &mcp.GetPromptParams{Name: "thinkdeeper",
			Arguments: map[string]string{"model": "llama3.2", "thinking_mode": mode}})
		if err != nil {
			t.Fatal(err)
		}
		return got.Messages[0].Content.(*mcp.TextContent).Text
	}
	if msg := say(""); strings.Contains(msg, "thinking mode") || !strings.Contains(msg, "thinkdeep") {
		t.Errorf("thinkdeeper without a mode sets one: %q", msg)
	}
	if msg := say("low"); !strings.Contains(msg, "thinking mode low") {
		t.Errorf("thinkdeeper with mode low: %q", msg)
	}
}
