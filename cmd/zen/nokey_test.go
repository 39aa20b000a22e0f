package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// firstContact is a zen started with no provider key, as a new user starts
// it, and how it should name its .env files: by their paths (its working
// directory's and the user's) on the user's own server, in general words
// without any absolute path on a shared one.
type firstContact struct {
	session  *mcp.ClientSession
	envFiles []string
	shared   bool
}

// envFilesInGeneral is how zen names its .env files to those who may not
// see their paths.
const envFilesInGeneral = ".env in zen's working directory or the user-level zen/.env under XDG_CONFIG_HOME"

// absolutePath finds an absolute path: a word that starts with "/"
// ("zen/.env" and "~/.config" name no one's directory).
var absolutePath = regexp.MustCompile(`(^|[\s(,;:="'])/[^\s]`)

// routerHealth is what `zen health` says of the router at addr.
func routerHealth(t *testing.T, addr string) (string, error) {
	t.Helper()
	return runZen(t, nil, "health", "--grpc", addr, "--service", "zen.router.v1.RouterService")
}

// TestNoKeyStillStarts: without a provider key, serve and stdio start;
// tools/list, listmodels (saying how to add a provider) and version work,
// and a tool that needs a model answers a tool error naming the variables
// and the .env files zen reads: by their paths on the user's own server,
// in general words on a shared one, and in health's reason, which needs no
// token, always.
func TestNoKeyStillStarts(t *testing.T) {
	t.Parallel()
	for _, layout := range []struct {
		name  string
		start func(t *testing.T, dir, xdg string) firstContact
	}{
		{"serve", func(t *testing.T, dir, xdg string) firstContact {
			p := startZenIn(t, dir, map[string]string{"XDG_CONFIG_HOME": xdg}, []string{"mcp", "gateway", "grpc"},
				serveArgs()...)
			if log := p.logText(); !strings.Contains(log, "router has no model provider") {
				t.Errorf("serve logged no warning about the missing provider:\n%s", log)
			}
			if out, err := routerHealth(t, p.addr("grpc")); err == nil || !strings.Contains(out, envFilesInGeneral) ||
				absolutePath.MatchString(out) {
				t.Errorf("the router's health: err %v, output %q; want the reason without an absolute path", err, out)
			}
			// The gateway tells a curl user the same.
			code, body := request(t, "GET", "http://"+p.addr("gateway")+"/v1/models", "", "")
			var models struct {
				SetupHelp string `json:"setup_help"`
			}
			if err := json.Unmarshal([]byte(body), &models); code != 200 || err != nil ||
				!strings.Contains(models.SetupHelp, "CUSTOM_API_URL") {
				t.Errorf("GET /v1/models = %d, setup_help %q (%v)", code, models.SetupHelp, err)
			}
			return firstContact{session: connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")}
		}},
		{"serve shared by a tokens file", func(t *testing.T, dir, xdg string) firstContact {
			tokens := filepath.Join(t.TempDir(), "tokens")
			writeEnvFile(t, tokens, "alice "+aliceToken)
			p := startZenIn(t, dir, map[string]string{"XDG_CONFIG_HOME": xdg, "ZEN_AUTH_TOKENS_FILE": tokens},
				[]string{"mcp", "gateway"}, serveArgs()...)
			if log := p.logText(); !strings.Contains(log, filepath.Join(xdg, "zen", ".env")) {
				t.Errorf("serve's log does not name the user's .env by its path:\n%s", log)
			}
			code, body := request(t, "GET", "http://"+p.addr("gateway")+"/v1/models", aliceToken, "")
			if code != 200 || !strings.Contains(body, envFilesInGeneral) || absolutePath.MatchString(body) {
				t.Errorf("GET /v1/models = %d, %s; want the setup help without an absolute path", code, body)
			}
			cs, err := connectAs(t, "http://"+p.addr("mcp")+"/mcp", aliceToken)
			if err != nil {
				t.Fatal(err)
			}
			return firstContact{session: cs, shared: true}
		}},
		{"stdio", func(t *testing.T, dir, xdg string) firstContact {
			cmd := exec.Command(zenBin, "stdio")
			cmd.Env, cmd.Dir = baseEnv(t, map[string]string{"XDG_CONFIG_HOME": xdg}), dir
			return firstContact{session: stdioStackFrom(t, cmd).session}
		}},
	} {
		t.Run(layout.name, func(t *testing.T) {
			t.Parallel()
			dir, xdg := t.TempDir(), t.TempDir()
			zc := layout.start(t, dir, xdg)
			switch {
			case layout.name == "stdio": // a project's .env is not zen's
				zc.envFiles = []string{filepath.Join(xdg, "zen", ".env")}
			case !zc.shared:
				zc.envFiles = []string{filepath.Join(dir, ".env"), filepath.Join(xdg, "zen", ".env")}
			}
			checkFirstContact(t, zc)
		})
	}
}

func checkFirstContact(t *testing.T, zc firstContact) {
	t.Helper()
	cs := zc.session
	if got := cs.InitializeResult().Instructions; !strings.Contains(got, "No model provider is configured yet") {
		t.Errorf("instructions = %q; want them to point to listmodels for the setup", got)
	}
	list, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if len(list.Tools) != len(toolOrder) {
		t.Errorf("tools/list has %d tools, want %d", len(list.Tools), len(toolOrder))
	}
	for _, tool := range list.Tools {
		if tool.Name != "chat" {
			continue
		}
		schema, _ := json.Marshal(tool.InputSchema)
		if !strings.Contains(string(schema), "no model provider is configured (see `listmodels`)") {
			t.Errorf("chat's model field does not say no model is available yet: %s", schema)
		}
	}
	wantNamed := append([]string{"GEMINI_API_KEY", "OPENAI_API_KEY", "OPENROUTER_API_KEY", "CUSTOM_API_URL"},
		zc.envFiles...)
	if zc.shared {
		wantNamed = append(wantNamed, envFilesInGeneral)
	}
	// noPaths fails when a shared server shows a client an absolute path.
	noPaths := func(what, text string) {
		if zc.shared && absolutePath.MatchString(text) {
			t.Errorf("%s shows an absolute path on a shared server: %s", what, text)
		}
	}

	res, got := callTool(t, cs, "listmodels", map[string]any{})
	content, _ := got["content"].(string)
	if res.IsError || !strings.Contains(content, "Setup needed") {
		t.Errorf("listmodels: error %v, content:\n%s", res.IsError, content)
	}
	for _, want := range wantNamed {
		if !strings.Contains(content, want) {
			t.Errorf("listmodels does not name %s:\n%s", want, content)
		}
	}
	noPaths("listmodels", content)
	if res, got := callTool(t, cs, "version", map[string]any{}); res.IsError || got["status"] != "success" {
		t.Errorf("version: %s", text(res))
	}

	for _, model := range []string{"gpt-5", ""} {
		args := map[string]any{"prompt": "hello?", "working_directory_absolute_path": t.TempDir()}
		if model != "" {
			args["model"] = model
		}
		res, got := callTool(t, cs, "chat", args)
		msg, _ := got["content"].(string)
		if !res.IsError || got["status"] != "error" ||
			!strings.HasPrefix(msg, "Error in chat: no model provider is configured") {
			t.Errorf("chat (model %q) without a provider: error %v, %s", model, res.IsError, text(res))
		}
		for _, want := range wantNamed {
			if !strings.Contains(msg, want) {
				t.Errorf("chat's error does not name %s: %s", want, msg)
			}
		}
		noPaths("chat's error", msg)
	}
}

// TestUserDotEnvReachesTheRouter: keys in $XDG_CONFIG_HOME/zen/.env reach
// a zen stdio started in any directory, and the process environment wins
// over them. (The working directory's .env, a project's, is not read:
// TestAProjectsDotEnvDoesNotConfigureStdio.)
func TestUserDotEnvReachesTheRouter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name                    string
		process, project, users bool // who sets CUSTOM_API_URL
		want                    string
	}{
		{name: "user file only", users: true, want: "users"},
		{name: "process over both", process: true, project: true, users: true, want: "process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fakes := map[string]*fakemodel.Server{}
			for _, who := range []string{"process", "project", "users"} {
				fake := fakemodel.New(t)
				fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "from " + who} })
				fakes[who] = fake
			}
			dir, xdg := t.TempDir(), t.TempDir()
			env := map[string]string{"XDG_CONFIG_HOME": xdg}
			if tc.process {
				env["CUSTOM_API_URL"] = fakes["process"].URL()
			}
			if tc.project {
				writeEnvFile(t, filepath.Join(dir, ".env"), "CUSTOM_API_URL="+fakes["project"].URL())
			}
			if tc.users {
				writeEnvFile(t, filepath.Join(xdg, "zen", ".env"), "CUSTOM_API_URL="+fakes["users"].URL())
			}
			cmd := exec.Command(zenBin, "stdio")
			cmd.Env, cmd.Dir = baseEnv(t, env), dir
			cs := stdioStackFrom(t, cmd).session
			res, got := callTool(t, cs, "chat", map[string]any{"prompt": "who answers?",
				"working_directory_absolute_path": t.TempDir(), "model": "local-llama"})
			if content, _ := got["content"].(string); res.IsError || !strings.HasPrefix(content, "from "+tc.want) {
				t.Errorf("chat: %s; want the answer of the %s's server", text(res), tc.want)
			}
		})
	}
}

func writeEnvFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRouterAloneWithoutProviderIsNotReady: in a cluster, a router with no
// provider starts and stays up (the whole server serves, so liveness and
// startup probes pass and nothing restarts it), but its readiness fails
// with the reason, which names the variables and the .env files without
// their paths (health needs no token; the log has them); a key in the
// user's .env makes it ready.
func TestRouterAloneWithoutProviderIsNotReady(t *testing.T) {
	t.Parallel()
	xdg := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": xdg, "ZEN_GRPC_ADDR": "127.0.0.1:0"}
	rt := startZen(t, env, []string{"grpc"}, "router")
	addr := rt.addr("grpc")
	if out, err := runZen(t, nil, "health", "--grpc", addr); err != nil {
		t.Errorf("liveness (the whole server): %v\n%s", err, out)
	}
	out, err := routerHealth(t, addr)
	if err == nil || !strings.Contains(out, "no model provider is configured") ||
		!strings.Contains(out, "CUSTOM_API_URL") || !strings.Contains(out, envFilesInGeneral) {
		t.Errorf("readiness without a provider: err %v, output %q; want a failure saying why", err, out)
	}
	if absolutePath.MatchString(out) {
		t.Errorf("health's reason, which needs no token, shows an absolute path: %q", out)
	}
	if log := rt.logText(); !strings.Contains(log, "router has no model provider") ||
		!strings.Contains(log, filepath.Join(xdg, "zen", ".env")) {
		t.Errorf("the router logged no warning naming the user's .env by its path:\n%s", log)
	}

	writeEnvFile(t, filepath.Join(xdg, "zen", ".env"), "CUSTOM_API_URL="+fakemodel.New(t).URL())
	ready := startZen(t, env, []string{"grpc"}, "router")
	out, err = routerHealth(t, ready.addr("grpc"))
	if err != nil {
		t.Errorf("readiness with a key in the user's .env: %v\n%s", err, out)
	}
}
