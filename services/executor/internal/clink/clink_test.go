package clink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
