package clink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestLoadMergesAndRejects(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "g.json"), []byte(`{"name": "Gemini", "timeout_seconds": 5, "roles": {"tester": {"prompt_path": "clink_default"}}}`), 0o644)
	r, err := Load(dir, filepath.Join(dir, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := r.Get("gemini")
	if g.Command != "gemini" || g.Timeout().Seconds() != 5 || len(g.Roles) != 4 {
		t.Errorf("merged gemini = %+v", g)
	}
	if strings.Join(r.Names(), ",") != "claude,codex,gemini" {
		t.Errorf("names = %v", r.Names())
	}
	for name, body := range map[string]string{
		"unknown field": `{"name": "x", "command": "x", "colour": "red"}`,
		"no command":    `{"name": "newcli"}`,
		"bad parser":    `{"name": "y", "command": "y", "parser": "xml"}`,
	} {
		bad := t.TempDir()
		os.WriteFile(filepath.Join(bad, "c.json"), []byte(body), 0o644)
		if _, err := Load(bad, ""); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := Load(filepath.Join(dir, "nope.json"), ""); err == nil {
		t.Error("a missing CLI_CLIENTS_CONFIG_PATH was accepted")
	}
}

func TestParsers(t *testing.T) {
	p, err := parseGemini("Loaded.\n"+`{"response": "hi", "stats": {"a": 1}}`, "")
	if err != nil || p.Content != "hi" || p.Metadata["stats"] == nil {
		t.Errorf("gemini: %+v %v", p, err)
	}
	if _, err := parseGemini(`{"error": {"message": "quota"}}`, ""); err == nil || !strings.Contains(err.Error(), "quota") {
		t.Errorf("gemini error: %v", err)
	}
	p, err = parseCodex("{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"a\"}}\nnoise\n{\"type\":\"item.completed\",\"item\":{\"type\":\"agent_message\",\"text\":\"b\"}}\n", "")
	if err != nil || p.Content != "a\n\nb" {
		t.Errorf("codex: %+v %v", p, err)
	}
	if _, err := parseCodex(`{"type":"error","message":"denied"}`, ""); err == nil || !strings.Contains(err.Error(), "denied") {
		t.Errorf("codex error: %v", err)
	}
	if p, err := parseClaude(`{"result": "ok", "usage": {"x": 1}}`, ""); err != nil || p.Content != "ok" {
		t.Errorf("claude: %+v %v", p, err)
	}
	if _, err := parseClaude(`{"result": "bad", "is_error": true}`, ""); err == nil {
		t.Error("claude error accepted")
	}
}

// TestClaudesArrayOfEventsIsRead: newer claude CLIs print --output-format
// json as an array of events (system, assistant, ..., result), which zen
// refused as not the JSON it expected (the reference's #295). The result
// event's text is the answer, and its error flag an error.
func TestClaudesArrayOfEventsIsRead(t *testing.T) {
	t.Parallel()
	events := `[{"type":"system","subtype":"init","session_id":"s","usage":"n/a","result":7},` +
		`{"type":"assistant","message":{"content":[{"type":"text","text":"working"}]}},` +
		`{"type":"result","subtype":"success","is_error":false,"result":"CLAUDE-ARRAY","duration_ms":1200,` +
		`"usage":{"input_tokens":3}}]`
	p, err := parseClaude("Loaded.\n"+events+"\nbye\n", "") // events of other shapes, text after it
	if err != nil || p.Content != "CLAUDE-ARRAY" || p.Metadata["usage"] == nil || p.Metadata["latency_ms"] != 1200.0 {
		t.Errorf("claude's array: %+v %v", p, err)
	}
	failed := `[{"type":"system"},{"type":"result","is_error":true,"result":"credit balance too low"}]`
	if _, err := parseClaude(failed, ""); err == nil || !strings.Contains(err.Error(), "credit balance") {
		t.Errorf("claude's array with an error: %v", err)
	}
	if _, err := parseClaude(`[{"type":"system"}]`, ""); err == nil || !strings.Contains(err.Error(), "result") {
		t.Errorf("claude's array without a result: %v", err)
	}
}

// TestGeminisStatsAreRead: the reference reads, from gemini's stats, the
// model that answered, its tokens and the API's latency; zen passed the
// stats through alone, and named the CLI as the model.
func TestGeminisStatsAreRead(t *testing.T) {
	t.Parallel()
	// The model that answered comes first, as gemini writes them; a model
	// it used on the way (whose name sorts first) after it.
	out := `{"response": "hi", "stats": {"models": {"gemini-2.5-pro": {"api": {"totalRequests": 1,
		"totalLatencyMs": 4321}, "tokens": {"prompt": 120, "candidates": 30, "total": 150}},
		"gemini-2.5-flash-lite": {"api": {"totalLatencyMs": 9}, "tokens": {"total": 5}}}}}`
	p, err := parseGemini(out, "")
	if err != nil {
		t.Fatal(err)
	}
	want := Parsed{Content: "hi", Model: "gemini-2.5-pro", Metadata: map[string]any{
		"token_usage": map[string]any{"prompt": 120.0, "candidates": 30.0, "total": 150.0}, "latency_ms": 4321.0}}
	ignoreStats := cmpopts.IgnoreMapEntries(func(k string, _ any) bool { return k == "stats" })
	if diff := cmp.Diff(want, p, ignoreStats); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
}

// TestCodexReviewsWithItsOwnPrompt: as the reference's, codex's
// codereviewer role has a prompt of its own (it has a shell: it reads the
// change with git and may run the tests), the other CLIs the shared one.
func TestCodexReviewsWithItsOwnPrompt(t *testing.T) {
	t.Parallel()
	r, err := Load("", "")
	if err != nil {
		t.Fatal(err)
	}
	for cli, want := range map[string]string{"codex": "clink_codex_codereviewer", "gemini": "clink_codereviewer",
		"claude": "clink_codereviewer"} {
		c, _ := r.Get(cli)
		if got := c.Roles["codereviewer"].PromptPath; got != want {
			t.Errorf("%s's codereviewer prompt = %q, want %q", cli, got, want)
		}
	}
}
