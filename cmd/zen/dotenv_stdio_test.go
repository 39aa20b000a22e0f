package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/logtest"
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
	var logged logtest.Buffer
	cmd.Stderr = &logged
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
	// Whoever kept zen's settings there is told where they go now.
	if log := logged.String(); !strings.Contains(log, "does not read the working directory's .env") ||
		!strings.Contains(log, filepath.Join(config, "zen", ".env")) {
		t.Errorf("stdio's log does not say it left ./.env unread, naming the user's file:\n%s", log)
	}
}

// TestServesDotEnvWinsOverTheUsers: zen serve, started by whoever chose
// its directory, reads that directory's .env before the user's.
func TestServesDotEnvWinsOverTheUsers(t *testing.T) {
	t.Parallel()
	answer := func(who string) *fakemodel.Server {
		fake := fakemodel.New(t)
		fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "from " + who} })
		return fake
	}
	project, users := answer("project"), answer("users")
	dir, xdg := t.TempDir(), t.TempDir()
	writeEnvFile(t, filepath.Join(dir, ".env"), "CUSTOM_API_URL="+project.URL())
	writeEnvFile(t, filepath.Join(xdg, "zen", ".env"), "CUSTOM_API_URL="+users.URL())
	p := startZenIn(t, dir, map[string]string{"XDG_CONFIG_HOME": xdg}, []string{"mcp"}, serveArgs()...)
	cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
	res, got := callTool(t, cs, "chat", map[string]any{"prompt": "who answers?",
		"working_directory_absolute_path": t.TempDir(), "model": "local-llama"})
	if content, _ := got["content"].(string); res.IsError || !strings.HasPrefix(content, "from project") {
		t.Errorf("chat: %s; want the answer of the working directory's .env's server", text(res))
	}
}

// A call of a tool whose name is longer than any tool's is answered as an
// unknown tool, quoting the start of its name: the SDK quoted it whole,
// and a name of 4 MB made an error of 14 MB, over stdio and HTTP alike.
// (Over HTTP the client sends the name in a header too, which zen bounds
// at 64 KiB: a longer name is refused as too large before it is read.)
func TestAnUnknownToolsLongNameIsNotQuotedWhole(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("\u0085", 1<<14) // 32 KiB: quoted whole, an error of over 64 KiB
	for _, s := range []struct {
		name  string
		start func(*testing.T, map[string]string) stack
	}{{"stdio", stdioStack}, {"serve", serveStack}} {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			st := s.start(t, nil)
			_, err := st.session.CallTool(t.Context(), &mcp.CallToolParams{Name: long, Arguments: map[string]any{}})
			if err == nil || len(err.Error()) > 2<<10 || !strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("calling a tool named with %d bytes: an error of %d bytes (%.200v); want one under 2 KiB "+
					"naming an unknown tool", len(long), len(fmt.Sprint(err)), err)
			}
		})
	}
}

// TestStdioTakesNoRelativeConfigurationPath: stdio runs in whatever
// project the agent opens, so a relative CLI_CLIENTS_CONFIG_PATH (the
// reference's conf/... form, kept in the user's .env) named a file of that
// project's: a cloned repository's conf/cli_clients.json ran its own
// command under clink. stdio refuses to start on one, saying why and what
// to write instead; an absolute path serves.
func TestStdioTakesNoRelativeConfigurationPath(t *testing.T) {
	t.Parallel()
	project := t.TempDir()
	for _, name := range []string{"CLI_CLIENTS_CONFIG_PATH", "CUSTOM_MODELS_CONFIG_PATH"} {
		cmd := exec.Command(zenBin, "stdio")
		cmd.Env = baseEnv(t, map[string]string{name: "conf/clients.json"})
		cmd.Dir = project
		cmd.Stdin = strings.NewReader("")
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), name) || !strings.Contains(string(out), "absolute") {
			t.Errorf("%s=conf/clients.json: %v\n%s\nwant stdio refused to start, naming it and asking for an "+
				"absolute path", name, err, out)
		}
	}
}
