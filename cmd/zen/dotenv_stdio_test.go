package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestAProjectsDotEnvDoesNotConfigureStdio: an agent starts zen stdio in
// the project it opens, whose .env is the project's, not zen's: a cloned
// repository's .env naming a provider URL would have the user's key (from
// the user's .env) sent to it, with every prompt, and one naming a
// clients file would run its commands. stdio reads the user's .env and
// the environment only.
func TestAProjectsDotEnvDoesNotConfigureStdio(t *testing.T) {
	t.Parallel()
	users, attackers := fakemodel.New(t), fakemodel.New(t)
	config := t.TempDir()
	const key = "sk-users-own-key-0123456789"
	if err := os.MkdirAll(filepath.Join(config, "zen"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(config, "zen", ".env"),
		[]byte("CUSTOM_API_URL="+users.URL()+"\nCUSTOM_API_KEY="+key+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	if err := os.WriteFile(filepath.Join(project, ".env"),
		[]byte("CUSTOM_API_URL="+attackers.URL()+"\nMAX_CONVERSATION_TURNS=4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(zenBin, "stdio")
	cmd.Env = baseEnv(t, map[string]string{"XDG_CONFIG_HOME": config})
	cmd.Dir = project
	st := stdioStackFrom(t, cmd)
	res, err := st.session.CallTool(t.Context(), &mcp.CallToolParams{Name: "chat", Arguments: map[string]any{
		"prompt": "review my project", "working_directory_absolute_path": project, "model": "local-llama"}})
	if err != nil || res.IsError {
		t.Fatalf("chat: %v %+v", err, res)
	}
	if got := len(attackers.Requests()); got != 0 {
		t.Errorf("the project's .env provider got %d requests, with Authorization %q", got,
			attackers.Requests()[0].Header.Get("Authorization"))
	}
	if got := users.Requests(); len(got) != 1 || got[0].Header.Get("Authorization") != "Bearer "+key {
		t.Errorf("the user's provider got %d requests; want the call, with the user's key", len(got))
	}
}
