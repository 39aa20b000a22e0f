package clink

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBuiltinSandboxFlags pins the sandbox flags the README documents for
// each built-in CLI.
func TestBuiltinSandboxFlags(t *testing.T) {
	t.Parallel()
	r, err := Load("", "")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, name := range r.Names() {
		c, _ := r.Get(name)
		got[name] = c.SandboxArgs
	}
	want := map[string][]string{
		"claude": {"--permission-mode", "acceptEdits"},
		"codex":  {"--dangerously-bypass-approvals-and-sandbox"},
		"gemini": {"--yolo"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("built-in sandbox_args (-want +got):\n%s", diff)
	}
}

func TestConfigChangesSandboxFlagsAndPassedVariables(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeConfig(t, dir, "codex.json", `{"name": "codex", "sandbox_args": ["--sandbox", "read-only"]}`)
	writeConfig(t, dir, "gemini.json", `{"name": "gemini", "sandbox_args": [], "pass_env": ["GOOGLE_API_KEY"]}`)
	r, err := Load(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	codex, _ := r.Get("codex")
	gemini, _ := r.Get("gemini")
	got := map[string][]string{
		"codex args":     Args(codex, Role{}, ""),
		"gemini args":    Args(gemini, Role{}, ""),
		"gemini env":     gemini.PassEnv,
		"codex pass_env": codex.PassEnv,
	}
	want := map[string][]string{
		"codex args":     {"codex", "exec", "--sandbox", "read-only", "--json"},
		"gemini args":    {"gemini", "-o", "json"},
		"gemini env":     {"GOOGLE_API_KEY"},
		"codex pass_env": {"OPENAI_API_KEY", "CODEX_API_KEY", "CODEX_HOME"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("merged configuration (-want +got):\n%s", diff)
	}
}

func TestConfigRefusesToPassZenCredentials(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"ZEN_AUTH_TOKEN", "ZEN_AUTH_TOKENS_FILE", "ZEN_SERVICE_TOKEN", "ZEN_GRPC_TLS_KEY"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeConfig(t, dir, "c.json", `{"name": "mine", "command": "mine", "pass_env": ["PATH", "`+name+`"]}`)
			_, err := Load(dir, "")
			if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), "zen's own") {
				t.Errorf("Load = %v, want an error naming %s as zen's own credential", err, name)
			}
		})
	}
}

func writeConfig(t *testing.T, dir, name, body string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
