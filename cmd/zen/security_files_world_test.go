package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// filesCatalogue replaces the Custom catalogue with one model that takes
// images and writes code, so every file argument and the generated code
// file are in play. Its description is a secret: the catalogue is zen's
// own configuration.
const filesCatalogue = `{"_README": {"description": "SECRET-CATALOGUE"}, "models": [
  {"model_name": "coder", "context_window": 32768, "max_output_tokens": 4096, "supports_images": true,
   "max_image_size_mb": 1, "allow_code_generation": true}
]}`

const (
	filesAlice = "alice-files-0123456789"
	filesBob   = "bob-SECRET-TOKEN-0123456789" // what client A must never read in the tokens file
	// generatedBody is the code the model writes when a prompt asks for it.
	generatedBody = "GENERATED-BODY"
	writeCode     = "WRITE CODE"
)

// fileWorld is a user's machine as an attacker finds it: a home holding
// keys, credentials and a project, zen's own configuration beside them,
// victims outside the roots; and three zens over it: one person's (serve
// on loopback, the home as root), a shared server (a tokens file) with no
// roots, and a shared server whose operator set ZEN_FILE_ROOTS.
type fileWorld struct {
	home, proj, srv, shared, outside string
	fake                             *fakemodel.Server
	local, open, rooted              *mcp.ClientSession
	secrets                          map[string]string // path: content that must never reach the model
	before                           map[string]string // the victims, as they were
}

func newFileWorld(t *testing.T) *fileWorld {
	base := t.TempDir()
	w := &fileWorld{home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside"),
		secrets: map[string]string{}}
	w.proj, w.srv, w.shared = filepath.Join(w.home, "proj"), filepath.Join(w.home, "srv"), filepath.Join(w.home, "shared")
	tokens := filepath.Join(w.shared, "tokens.txt")
	secret := func(p, content string) {
		plant(t, p, content)
		w.secrets[p] = content
	}
	secret(filepath.Join(w.home, ".ssh", "id_rsa"), "-----BEGIN SECRET-SSH-KEY-----")
	secret(filepath.Join(w.home, ".aws", "credentials"), "aws_secret_access_key = SECRET-AWS")
	secret(filepath.Join(w.home, ".netrc"), "machine example.com password SECRET-NETRC")
	secret(filepath.Join(w.srv, ".env"), "ZEN_FILES_MARKER=SECRET-SERVER-DOTENV\n")
	secret(filepath.Join(w.srv, "custom.json"), filesCatalogue)
	secret(filepath.Join(w.proj, ".env"), "DB_PASSWORD=SECRET-PROJECT-DOTENV")
	secret(filepath.Join(w.proj, ".env.production"), "DB_PASSWORD=SECRET-DOTENV-PRODUCTION")
	secret(tokens, "alice "+filesAlice+"\nbob "+filesBob+"\n")
	secret(filepath.Join(w.outside, "secret.txt"), "SECRET-OUTSIDE-THE-ROOTS")
	plant(t, filepath.Join(w.outside, "victim.txt"), "VICTIM-ORIGINAL")
	plant(t, filepath.Join(w.proj, "main.go"), "package main // HONEST-CODE")
	plant(t, filepath.Join(w.shared, "app.go"), "package app // SHARED-CODE")
	link(t, filepath.Join(w.home, ".aws", "credentials"), filepath.Join(w.proj, "notes.md"))
	link(t, filepath.Join(w.home, ".ssh", "id_rsa"), filepath.Join(w.proj, "shot.png"))
	link(t, filepath.Join(w.home, ".netrc"), filepath.Join(w.proj, "prompt.txt"))
	link(t, filepath.Join(w.outside, "victim.txt"), filepath.Join(w.home, "trap", "zen_generated.code"))
	// Links out of the roots, to probe with: what lies past them must not
	// change the answer (one to a file that exists, one to none, one to
	// the directory above the home).
	link(t, filepath.Join(w.outside, "secret.txt"), filepath.Join(w.home, "probe", "kept.md"))
	link(t, filepath.Join(w.outside, "missing.txt"), filepath.Join(w.home, "probe", "gone.md"))
	link(t, base, filepath.Join(w.home, "probe", "up"))
	for _, d := range []string{"work", "shared-work"} {
		if err := os.MkdirAll(filepath.Join(w.home, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w.before = w.victims(t)

	w.fake = fakemodel.New(t)
	w.fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		if strings.Contains(r.AllText(), writeCode) {
			return fakemodel.Reply{Content: "Here it is.\n<GENERATED-CODE>\n" + generatedBody + "\n</GENERATED-CODE>"}
		}
		return fakemodel.Reply{Content: "looked at it"}
	})
	env := mergeEnv(fakeEnv(w.fake), map[string]string{
		"HOME":                      w.home,
		"CUSTOM_MODELS_CONFIG_PATH": filepath.Join(w.srv, "custom.json"),
	})
	serveIn := func(extra map[string]string, token string) *mcp.ClientSession {
		p := startZenIn(t, w.srv, mergeEnv(env, extra), []string{"mcp"}, serveArgs()...)
		url := "http://" + p.addr("mcp") + "/mcp"
		if token == "" {
			return connectHTTP(t, url)
		}
		cs, err := connectAs(t, url, token)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	w.local = serveIn(nil, "")
	w.open = serveIn(map[string]string{"ZEN_AUTH_TOKENS_FILE": tokens}, filesAlice)
	w.rooted = serveIn(map[string]string{"ZEN_AUTH_TOKENS_FILE": tokens, "ZEN_FILE_ROOTS": w.shared}, filesAlice)
	return w
}

func plant(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

// victims is every file an attack could change or add to: outside the
// roots, in the credential stores and at the trap, with its content (a
// link as its target).
func (w *fileWorld) victims(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, dir := range []string{w.outside, filepath.Join(w.home, ".ssh"), filepath.Join(w.home, ".aws"),
		filepath.Join(w.home, "trap"), filepath.Join(w.home, "shared-work")} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			if target, err := os.Readlink(p); err == nil {
				out[p] = "-> " + target
				continue
			}
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = string(raw)
		}
	}
	return out
}

// checkNothingLeaked fails when a secret reached the model (as text or as
// an image's base64) or the reply, or when a victim changed.
func (w *fileWorld) checkNothingLeaked(t *testing.T, reply string) {
	t.Helper()
	for path, content := range w.secrets {
		encoded := base64.StdEncoding.EncodeToString([]byte(content))
		for i, req := range w.fake.Requests() {
			if body := string(req.Body); strings.Contains(body, content) || strings.Contains(body, encoded) {
				t.Errorf("model request %d carries %s", i, path)
			}
		}
		if strings.Contains(reply, content) {
			t.Errorf("the reply carries %s:\n%s", path, reply)
		}
	}
	if diff := cmp.Diff(w.before, w.victims(t)); diff != "" {
		t.Errorf("victims changed (-before +after):\n%s", diff)
	}
}

// modelSaw reports whether some model request carries s.
func (w *fileWorld) modelSaw(s string) bool {
	for _, req := range w.fake.Requests() {
		if strings.Contains(string(req.Body), s) {
			return true
		}
	}
	return false
}
