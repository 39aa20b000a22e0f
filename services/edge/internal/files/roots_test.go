package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// secretHome is a home directory with a project in it and every kind of
// secret the policy denies, plus zen's own configuration files.
type secretHome struct {
	home, proj, outside string
	tokens, models      string
	cliDir              string
}

func newSecretHome(t *testing.T) secretHome {
	t.Helper()
	base := t.TempDir()
	h := secretHome{home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	h.proj = filepath.Join(h.home, "proj")
	h.tokens = filepath.Join(h.proj, "tokens.txt")
	h.models = filepath.Join(h.home, "zen", "models.json")
	h.cliDir = filepath.Join(h.home, ".zen", "cli_clients")
	for _, f := range []string{
		".ssh/id_rsa", ".gnupg/secring.gpg", ".aws/credentials", ".azure/accessTokens.json",
		".config/gcloud/credentials.db", ".kube/config", ".docker/config.json", ".netrc", ".git-credentials",
		".npmrc", ".pypirc", "proj/.env", "proj/.env.local", "proj/.env.example", "proj/main.go",
		"proj/vendored/.aws/credentials", "proj/keys/id_ed25519", "proj/tokens.txt", "zen/models.json",
		".zen/cli_clients/mine.json", ".docker/daemon.json",
	} {
		write(t, filepath.Join(h.home, f), "content of "+f)
	}
	write(t, filepath.Join(h.outside, "secret.txt"), "outside")
	must(t, os.Symlink(filepath.Join(h.home, ".aws", "credentials"), filepath.Join(h.proj, "notes.md")))
	must(t, os.Symlink(filepath.Join(h.outside, "secret.txt"), filepath.Join(h.proj, "outside.md")))
	must(t, os.Symlink(h.outside, filepath.Join(h.proj, "outside-dir")))
	return h
}

func (h secretHome) policy(c Config) Policy {
	c.Home = h.home
	c.Own = append(c.Own, h.tokens, h.models, h.cliDir)
	return NewPolicy(c)
}

func TestRootsAndSecrets(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	in := func(p string) string { return filepath.Join(h.home, p) }
	checkResolve(t, h.policy(Config{}), []resolveCase{
		{"ssh key", in(".ssh/id_rsa"), "is in .ssh, which holds keys and credentials"},
		{"gnupg", in(".gnupg/secring.gpg"), "is in .gnupg"},
		{"aws", in(".aws/credentials"), "is in .aws"},
		{"azure", in(".azure/accessTokens.json"), "is in .azure"},
		{"gcloud", in(".config/gcloud/credentials.db"), "is in .config/gcloud"},
		{"kube", in(".kube/config"), "is in .kube"},
		{"docker credentials", in(".docker/config.json"), "is in .docker/config.json"},
		{"netrc", in(".netrc"), "is .netrc, a credentials file"},
		{"git credentials", in(".git-credentials"), "is .git-credentials, a credentials file"},
		{"npmrc", in(".npmrc"), "is .npmrc, a credentials file"},
		{"pypirc", in(".pypirc"), "is .pypirc, a credentials file"},
		{"a key outside .ssh", in("proj/keys/id_ed25519"), "is id_ed25519, a credentials file"},
		{"a credential store inside a project", in("proj/vendored/.aws/credentials"), "is in .aws"},
		{"a project's .env", in("proj/.env"), "is a .env file, which holds secrets"},
		{"a .env variant", in("proj/.env.local"), "is a .env file"},
		{"zen's tokens file", h.tokens, "zen reads its own configuration or secrets from"},
		{"zen's model catalogue", h.models, "zen reads its own configuration or secrets from"},
		{"zen's CLI configs", in(".zen/cli_clients/mine.json"), "zen reads its own configuration or secrets from"},
		{"a link to a credential store", in("proj/notes.md"), "(which is " + in(".aws/credentials") + ")"},
		{"outside the home", filepath.Join(h.outside, "secret.txt"), "is outside the directories zen may read " +
			"(your home directory, the default: " + h.home + ")"},
		{"a link out of the roots", in("proj/outside.md"), "is outside the directories zen may read"},
		{"a file under a linked directory out of the roots", in("proj/outside-dir/secret.txt"), "is outside"},
		{"/tmp", "/tmp", "is outside"},
		{"traversal out of the roots", in("proj/../../outside/secret.txt"), "is outside"},
		{"a .env template", in("proj/.env.example"), ""},
		{"docker's other settings", in(".docker/daemon.json"), ""},
		{"a project file", in("proj/main.go"), ""},
	})
}

func TestConfiguredRoots(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	pol := h.policy(Config{Roots: []string{h.outside}})
	checkResolve(t, pol, []resolveCase{
		{"inside a configured root", filepath.Join(h.outside, "secret.txt"), ""},
		{"the home is no longer a root", filepath.Join(h.proj, "main.go"), "is outside the directories zen may read " +
			"(ZEN_FILE_ROOTS: " + h.outside + "); pass files under them, or add the directory to ZEN_FILE_ROOTS"},
	})
}

func TestSharedServer(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	const why = "ZEN_AUTH_TOKENS_FILE names its clients"
	shared := h.policy(Config{Shared: why})
	for _, p := range []string{filepath.Join(h.proj, "main.go"), "/tmp", "/nonexistent/x.go", "~/proj/main.go"} {
		_, err := shared.Resolve(p)
		want := "access denied: " + p + ": zen reads no files on this server: it is shared (" + why + "), so its disk " +
			"is not yours, and ZEN_FILE_ROOTS is not set. Put what the model needs in the prompt instead, or ask the " +
			"operator to set ZEN_FILE_ROOTS to the directories clients may name"
		if err == nil || !errors.Is(err, ErrDenied) {
			t.Fatalf("Resolve(%s) = %v, want ErrDenied", p, err)
		}
		if diff := cmp.Diff(want, err.Error()); diff != "" {
			t.Errorf("Resolve(%s) (-want +got):\n%s", p, diff)
		}
	}
	if _, err := shared.ReadImage(filepath.Join(h.proj, "main.go")); !errors.Is(err, ErrDenied) {
		t.Errorf("ReadImage on a shared server = %v, want ErrDenied", err)
	}
	if _, err := shared.Expand([]string{h.proj}); !errors.Is(err, ErrDenied) {
		t.Errorf("Expand on a shared server = %v, want ErrDenied", err)
	}

	rooted := h.policy(Config{Shared: why, Roots: []string{h.proj}})
	checkResolve(t, rooted, []resolveCase{
		{"a configured root on a shared server", filepath.Join(h.proj, "main.go"), ""},
		{"its tokens file inside the root", h.tokens, "zen reads its own configuration or secrets from"},
		{"outside the configured root", filepath.Join(h.home, "zen", "other.go"), "is outside"},
	})
}

func TestNoHomeNoRoots(t *testing.T) {
	t.Parallel()
	_, err := NewPolicy(Config{}).Resolve("/srv/x.go")
	if err == nil || !strings.Contains(err.Error(), "ZEN_FILE_ROOTS is not set and there is no home directory (HOME)") {
		t.Errorf("err = %v", err)
	}
}

func TestExpandSkipsWhatThePolicyDenies(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	got, err := h.policy(Config{}).Expand([]string{h.proj})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(h.proj, "main.go")}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Expand(%s) (-want +got):\n%s", h.proj, diff)
	}
}

func TestImagesFollowThePolicy(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	must(t, os.Symlink(filepath.Join(h.home, ".ssh", "id_rsa"), filepath.Join(h.proj, "shot.png")))
	write(t, filepath.Join(h.outside, "pic.png"), "png")
	pol := h.policy(Config{})
	for p, want := range map[string]string{
		filepath.Join(h.proj, "shot.png"):   "is in .ssh",
		filepath.Join(h.outside, "pic.png"): "is outside",
	} {
		if _, err := pol.ReadImage(p); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadImage(%s) = %v, want %q", p, err, want)
		}
	}
}

// TestAWalkFollowsNoLinkOutOfItsDirectory: a directory named in a call
// is walked for its source files, and a link among them was followed to
// any file the policy allows: a cloned repository's hub.yaml pointing at
// ../.config/hub, or a history file under another name, went to the model
// with the project. A walk follows a link only to a file it would have
// found itself: inside the directory, and on no hidden or skipped path.
func TestAWalkFollowsNoLinkOutOfItsDirectory(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	write(t, filepath.Join(h.home, ".config", "hub"), "oauth_token: ghp_0123456789")
	write(t, filepath.Join(h.home, "other", "notes.txt"), "another project's notes")
	write(t, filepath.Join(h.proj, "src", "lib.go"), "package lib")
	write(t, filepath.Join(h.proj, ".secrets", "db.yaml"), "password: hunter2")
	write(t, filepath.Join(h.proj, "node_modules", "x", "index.js"), "module.exports = 1")
	write(t, filepath.Join(h.proj, "terraform.tfstate"), `{"secret": "s3cr3t"}`)
	write(t, filepath.Join(h.proj, "db.sqlite3"), "SQLite format 3")
	for link, target := range map[string]string{
		"hub.yaml": "../.config/hub", "notes.txt": "../other/notes.txt", "lib.go": "src/lib.go",
		"db.yaml": ".secrets/db.yaml", "dep.js": "node_modules/x/index.js",
		// Named as source, files a walk does not read.
		"README.md": "terraform.tfstate", "schema.sql": "db.sqlite3",
	} {
		must(t, os.Symlink(target, filepath.Join(h.proj, link)))
	}
	got, err := h.policy(Config{}).Expand([]string{h.proj})
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range got {
		got[i] = strings.TrimPrefix(p, h.proj+"/")
	}
	// main.go and tokens.txt (zen's own, denied) are the project's own; the
	// link to src/lib.go is followed to the file the walk finds anyway.
	want := []string{"src/lib.go", "main.go"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("walked (-want +got):\n%s", diff)
	}
}
