package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// Issue 11, item 7: clink's CLIs run with an allow-listed environment, and
// the values of zen's secrets are scrubbed from every result and log line.
// Each value is distinctive, so finding it anywhere is a leak.
const (
	secAuthToken    = "zen-auth-token-SECRET-01"
	secAliceToken   = "alice-token-SECRET-0002"
	secBobToken     = "bob-token-SECRET-000003"
	secServiceToken = "zen-service-SECRET-00004"
	secOpenAIKey    = "sk-openai-SECRET-000005"
	secGeminiKey    = "gemini-key-SECRET-00006"
	secXAIKey       = "xai-key-SECRET-0000007"
	secRouterKey    = "openrouter-SECRET-00008"
)

var zenSecrets = []string{secAuthToken, secAliceToken, secBobToken, secServiceToken, secOpenAIKey, secGeminiKey,
	secXAIKey, secRouterKey}

// clinkAttack is one attempt to get a secret out through clink or a model.
type clinkAttack struct {
	name string
	// attack runs it and returns all the attacker got back.
	attack func(t *testing.T) string
	// want are phrases the answer must hold: the redaction, or the refusal.
	want []string
	// envFile, when set, is where the stand-in CLI wrote the environment
	// it saw; envHas must be in it, and none of zen's credentials (names
	// or values) but envAllowed may be.
	envFile    string
	envHas     []string
	envAllowed []string
}

func TestSecurityClink(t *testing.T) {
	bin, conf, work, roots := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	writeFile(tokens, "alice "+secAliceToken+"\nbob "+secBobToken+"\n")
	fake := fakemodel.New(t)
	fakeCLI(t, bin, "gemini", "cat > /dev/null; env > "+work+"/gemini.env; env")
	fakeCLI(t, bin, "codex", "cat > /dev/null; env > "+work+"/codex.env; env")
	fakeCLI(t, bin, "catcli", "cat > /dev/null; cat "+tokens)
	fakeCLI(t, bin, "proccli", `cat > /dev/null; tr '\0' '\n' < /proc/$PPID/environ`)
	fakeCLI(t, bin, "leakcli", "cat > /dev/null; echo 'denied: "+secServiceToken+"' >&2; exit 1")
	for _, name := range []string{"gemini", "codex", "catcli", "proccli", "leakcli"} {
		writeFile(filepath.Join(conf, name+".json"), `{"name": "`+name+`", "command": "`+name+`", "parser": "text"}`)
	}
	env := map[string]string{
		"PATH": bin + ":" + os.Getenv("PATH"), "CLI_CLIENTS_CONFIG_PATH": conf, "ZEN_FILE_ROOTS": roots,
		"ZEN_AUTH_TOKEN": secAuthToken, "ZEN_AUTH_TOKENS_FILE": tokens, "ZEN_SERVICE_TOKEN": secServiceToken,
		"OPENAI_API_KEY": secOpenAIKey, "OPENAI_BASE_URL": fake.URL(), "OPENAI_ALLOWED_MODELS": "gpt-5",
		"GEMINI_API_KEY": secGeminiKey, "GEMINI_BASE_URL": fake.GeminiURL(),
		"XAI_API_KEY": secXAIKey, "XAI_BASE_URL": fake.URL(),
		"OPENROUTER_API_KEY": secRouterKey, "OPENROUTER_BASE_URL": fake.URL(),
		"ZEN_PROVIDER_ATTEMPTS": "1",
		// a tokens file makes this a shared server, where clink needs the
		// operator's consent (TestSecurityClinkOnASharedServer)
		"ZEN_CLINK_ON_SHARED": "true",
	}
	p := startZen(t, env, []string{"mcp", "gateway"}, serveArgs()...)
	session, err := connectAs(t, "http://"+p.addr("mcp")+"/mcp", secAliceToken)
	if err != nil {
		t.Fatal(err)
	}
	clink := func(cli string) func(t *testing.T) string {
		return func(t *testing.T) string {
			res, _ := callTool(t, session, "clink", map[string]any{"prompt": "show me", "cli_name": cli})
			return text(res)
		}
	}
	chat := func(reply fakemodel.Reply) func(t *testing.T) string {
		return func(t *testing.T) string {
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return reply })
			res, got := callTool(t, session, "chat", map[string]any{"prompt": "hello", "model": "gpt-5",
				"working_directory_absolute_path": roots})
			seen := text(res)
			if offer, ok := got["continuation_offer"].(map[string]any); ok {
				id := offer["continuation_id"].(string)
				thread := getBody(t, "http://"+p.addr("gateway")+"/v1/threads/"+id, secAliceToken)
				if !strings.Contains(thread, "the keys are [redacted]") {
					t.Errorf("the stored thread lacks the scrubbed answer:\n%s", thread)
				}
				seen += "\n" + thread
			}
			return seen
		}
	}
	base := []string{"PATH=", "HOME="}
	for _, c := range []clinkAttack{
		{name: "gemini sees its own key, not zen's tokens or other providers' keys", attack: clink("gemini"),
			want: []string{"GEMINI_API_KEY=[redacted]"}, envFile: filepath.Join(work, "gemini.env"),
			envHas: append(base, "GEMINI_API_KEY="+secGeminiKey), envAllowed: []string{secGeminiKey}},
		{name: "codex sees OpenAI's key only", attack: clink("codex"),
			want: []string{"OPENAI_API_KEY=[redacted]"}, envFile: filepath.Join(work, "codex.env"),
			envHas: append(base, "OPENAI_API_KEY="+secOpenAIKey), envAllowed: []string{secOpenAIKey}},
		{name: "a CLI that prints the tokens file", attack: clink("catcli"),
			want: []string{"alice [redacted]", "bob [redacted]"}},
		{name: "a CLI that reads zen's environment from /proc", attack: clink("proccli"),
			want: []string{"ZEN_AUTH_TOKEN=[redacted]", "ZEN_SERVICE_TOKEN=[redacted]", "XAI_API_KEY=[redacted]"}},
		{name: "a CLI whose error output quotes a secret", attack: clink("leakcli"),
			want: []string{"denied: [redacted]"}},
		{name: "a model answer that quotes keys, in the reply and the stored thread",
			attack: chat(fakemodel.Reply{Content: "the keys are " + secOpenAIKey + " and " + secAuthToken}),
			want:   []string{"the keys are [redacted] and [redacted]"}},
		{name: "a provider error that echoes secrets from the prompt, in the reply and the log",
			attack: chat(fakemodel.Reply{Status: 400,
				Message: "invalid request near " + secAuthToken + " and " + secGeminiKey}),
			want: []string{"invalid request near [redacted] and [redacted]"}},
		{name: "a configuration's pass_env and sandbox_args reach its CLI", attack: configuredCLI(env, work),
			want:    []string{"setting=visible-setting-value", `"content":"args=--sandbox read-only"`},
			envFile: filepath.Join(work, "passcli.env"),
			envHas:  append(base, "CUSTOM_TOOL_SETTING=visible-setting-value")},
		{name: "a configuration that passes ZEN_AUTH_TOKEN is refused", attack: refusedConfig(env),
			want: []string{"pass_env names ZEN_AUTH_TOKEN, one of zen's own credentials"}},
		{name: "zen's log", attack: func(*testing.T) string { return p.logText() }, want: []string{"[redacted]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.attack(t)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("the answer lacks %q:\n%.3000s", w, got)
				}
			}
			assertNoSecrets(t, "the answer", got)
			if c.envFile != "" {
				checkCLIEnv(t, c.envFile, c.envHas, c.envAllowed)
			}
		})
	}
}

// configuredCLI runs a zen whose configuration passes one variable to a
// CLI and tightens codex's sandbox flags; it returns what both answered.
func configuredCLI(env map[string]string, work string) func(t *testing.T) string {
	return func(t *testing.T) string {
		bin, conf := t.TempDir(), t.TempDir()
		fakeCLI(t, bin, "passcli", "cat > /dev/null; env > "+work+"/passcli.env; echo setting=$CUSTOM_TOOL_SETTING")
		fakeCLI(t, bin, "codex", `cat > /dev/null; echo "args=$*"`)
		writeFile(filepath.Join(conf, "pass.json"), `{"name": "passcli", "command": "passcli", "parser": "text", `+
			`"pass_env": ["CUSTOM_TOOL_SETTING", "UNSET_VARIABLE"]}`)
		writeFile(filepath.Join(conf, "codex.json"), `{"name": "codex", "parser": "text", "additional_args": [], `+
			`"sandbox_args": ["--sandbox", "read-only"]}`)
		p := startZen(t, mergeEnv(env, map[string]string{"PATH": bin + ":" + os.Getenv("PATH"),
			"CLI_CLIENTS_CONFIG_PATH": conf, "CUSTOM_TOOL_SETTING": "visible-setting-value"}),
			[]string{"mcp"}, serveArgs()...)
		session, err := connectAs(t, "http://"+p.addr("mcp")+"/mcp", secBobToken)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, cli := range []string{"passcli", "codex"} {
			res, _ := callTool(t, session, "clink", map[string]any{"prompt": "go", "cli_name": cli})
			out = append(out, text(res))
		}
		return strings.Join(out, "\n") + "\n" + p.logText()
	}
}

// refusedConfig starts zen with a configuration that asks for zen's own
// token; zen must not start, and must say why.
func refusedConfig(env map[string]string) func(t *testing.T) string {
	return func(t *testing.T) string {
		conf := t.TempDir()
		writeFile(filepath.Join(conf, "greedy.json"), `{"name": "greedy", "command": "greedy", `+
			`"pass_env": ["PATH", "ZEN_AUTH_TOKEN"]}`)
		ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, zenBin, serveArgs()...)
		cmd.Env = baseEnv(t, mergeEnv(env, map[string]string{"CLI_CLIENTS_CONFIG_PATH": conf}))
		cmd.Dir = t.TempDir()
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Errorf("zen started with a clink configuration that passes ZEN_AUTH_TOKEN")
		}
		return string(out)
	}
}

// checkCLIEnv reads the environment a stand-in CLI saw.
func checkCLIEnv(t *testing.T, path string, has, allowed []string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the CLI left no copy of its environment: %v", err)
	}
	seen := string(raw)
	for _, h := range has {
		if !strings.Contains(seen, h) {
			t.Errorf("the CLI's environment lacks %q:\n%s", h, seen)
		}
	}
	for _, name := range []string{"ZEN_AUTH_TOKEN=", "ZEN_AUTH_TOKENS_FILE=", "ZEN_SERVICE_TOKEN=", "ZEN_GRPC_TLS_"} {
		if strings.Contains(seen, name) {
			t.Errorf("the CLI was given %s", strings.TrimSuffix(name, "="))
		}
	}
	for _, s := range zenSecrets {
		if !strings.Contains(strings.Join(allowed, " "), s) && strings.Contains(seen, s) {
			t.Errorf("the CLI was given the secret %s", s)
		}
	}
}

// assertNoSecrets fails when any of zen's secret values is in text.
func assertNoSecrets(t *testing.T, where, text string) {
	t.Helper()
	for _, s := range zenSecrets {
		if strings.Contains(text, s) {
			t.Errorf("%s holds the secret %s", where, s)
		}
	}
}

// getBody fetches url with a bearer token and returns the body.
func getBody(t *testing.T, url, token string) string {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return string(body)
}

// TestSecurityClinkOnASharedServer: an agent CLI acts with zen's user's
// rights on zen's disk, past the file policy, so on a shared server a client
// cannot start one unless the operator said so.
func TestSecurityClinkOnASharedServer(t *testing.T) {
	t.Parallel()
	bin, conf, work := t.TempDir(), t.TempDir(), t.TempDir()
	ran := filepath.Join(work, "ran")
	fakeCLI(t, bin, "gemini", "cat > /dev/null; touch "+ran+"; cat ~/.ssh/id_rsa")
	writeFile(filepath.Join(conf, "gemini.json"), `{"name": "gemini", "command": "gemini", "parser": "text"}`)
	tokens := filepath.Join(t.TempDir(), "tokens")
	writeFile(tokens, "alice "+secAliceToken+"\n")
	env := mergeEnv(fakeEnv(fakemodel.New(t)), map[string]string{"PATH": bin + ":" + os.Getenv("PATH"),
		"CLI_CLIENTS_CONFIG_PATH": conf, "ZEN_AUTH_TOKENS_FILE": tokens})
	p := startZen(t, env, []string{"mcp"}, serveArgs()...)
	session, err := connectAs(t, "http://"+p.addr("mcp")+"/mcp", secAliceToken)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := callTool(t, session, "clink", map[string]any{"prompt": "read the server's keys", "cli_name": "gemini"})
	if !res.IsError || !strings.Contains(text(res), "ZEN_CLINK_ON_SHARED") {
		t.Errorf("clink on a shared server: %s", text(res))
	}
	if _, err := os.Stat(ran); err == nil {
		t.Error("the agent CLI ran on a shared server")
	}
}
