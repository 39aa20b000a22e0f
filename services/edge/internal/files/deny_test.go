package files

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// On a case-insensitive disk another spelling opens the same secret, so the
// deny rules ignore case. The files are made with that spelling here, since
// this disk may well be case-sensitive.
func TestDenyIgnoresCase(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	for _, f := range []string{".SSH/id_rsa", ".Aws/credentials", "proj/.ENV", "proj/ID_RSA", ".Config/GCloud/x.db"} {
		write(t, filepath.Join(h.home, f), "secret")
	}
	in := func(p string) string { return filepath.Join(h.home, p) }
	checkResolve(t, h.policy(Config{}), []resolveCase{
		{"an upper-case .ssh", in(".SSH/id_rsa"), "is in .ssh"},
		{"a mixed-case .aws", in(".Aws/credentials"), "is in .aws"},
		{"an upper-case .env", in("proj/.ENV"), "is a .env file"},
		{"an upper-case key name", in("proj/ID_RSA"), "a credentials file"},
		{"a mixed-case gcloud", in(".Config/GCloud/x.db"), "is in .config/gcloud"},
	})
}

// zen's own files are matched by identity and as they resolve at each
// check: a hard link, or a Secret mount whose link moved after start,
// reaches them no more than their own path does.
func TestOwnFilesByIdentity(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	must(t, os.Link(h.tokens, filepath.Join(h.proj, "hardlink.txt")))

	// A Kubernetes Secret volume: tokens -> ..data/tokens, ..data -> a
	// timestamped directory, swapped on rotation.
	mount := filepath.Join(h.proj, "secret")
	write(t, filepath.Join(mount, "v1", "tokens"), "alice token-v1")
	must(t, os.Symlink("v1", filepath.Join(mount, "..data")))
	must(t, os.Symlink(filepath.Join("..data", "tokens"), filepath.Join(mount, "tokens")))
	pol := h.policy(Config{Own: []string{filepath.Join(mount, "tokens")}})
	write(t, filepath.Join(mount, "v2", "tokens"), "alice token-v2")
	must(t, os.Remove(filepath.Join(mount, "..data")))
	must(t, os.Symlink("v2", filepath.Join(mount, "..data")))

	checkResolve(t, pol, []resolveCase{
		{"a hard link to the tokens file", filepath.Join(h.proj, "hardlink.txt"), "zen reads its own configuration"},
		{"the rotated tokens file", filepath.Join(mount, "v2", "tokens"), "zen reads its own configuration"},
		{"the rotated file through its link", filepath.Join(mount, "tokens"), "zen reads its own configuration"},
	})
}

// A home that sits among the system directories (/root, for zen run as
// root in a container) is still the user's: its projects are readable,
// while the rest of the system directory is not.
func TestHomeUnderASystemDirectory(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/root"); err != nil {
		t.Skip("no /root here")
	}
	pol := NewPolicy(Config{Home: "/root", Roots: []string{"/"}})
	checkResolve(t, pol, []resolveCase{
		{"a project in /root", "/root/proj/main.go", ""},
		{"/root's keys", "/root/.ssh/id_rsa", "is in .ssh"},
		{"/etc", "/etc/hostname", "is a system directory"},
		{"/proc", "/proc/self/environ", "is a system directory"},
	})
}

func TestMoreCredentialStores(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	names := []string{".config/gh/hosts.yml", ".codex/auth.json", ".claude/.credentials.json", ".vault-token",
		".cargo/credentials.toml", ".terraform.d/credentials.tfrc.json", ".config/containers/auth.json",
		".bash_history", "proj/.envrc", "proj/.env-prod", "proj/.env_local", "proj/.environment.go"}
	for _, f := range names {
		write(t, filepath.Join(h.home, f), "secret")
	}
	in := func(p string) string { return filepath.Join(h.home, p) }
	checkResolve(t, h.policy(Config{}), []resolveCase{
		{"gh's login", in(".config/gh/hosts.yml"), "is in .config/gh"},
		{"codex's login", in(".codex/auth.json"), "is in .codex/auth.json"},
		{"claude's login", in(".claude/.credentials.json"), "is in .claude/.credentials.json"},
		{"vault's token", in(".vault-token"), "a credentials file"},
		{"cargo's token", in(".cargo/credentials.toml"), "is in .cargo/credentials.toml"},
		{"terraform's token", in(".terraform.d/credentials.tfrc.json"), "is in .terraform.d"},
		{"podman's login", in(".config/containers/auth.json"), "is in .config/containers/auth.json"},
		{"a shell history", in(".bash_history"), "a credentials file"},
		{"direnv's .envrc", in("proj/.envrc"), "a credentials file"},
		{"a .env with a dash", in("proj/.env-prod"), "is a .env file"},
		{"a .env with an underscore", in("proj/.env_local"), "is a .env file"},
		{"a file that merely starts with .env", in("proj/.environment.go"), ""},
	})
}

// TestTheOtherToolsCredentialStores: logins and tokens of the tools an
// agent's user has, and private keys by their extensions, wherever the
// file sits. Each was read, and sent to the model, on a server whose root
// is the home.
func TestTheOtherToolsCredentialStores(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	cases := []resolveCase{
		{"git's XDG credential store", ".config/git/credentials", "is in .config/git/credentials"},
		{"gemini's login", ".gemini/oauth_creds.json", "is in .gemini/oauth_creds.json"},
		{"mysql's password", ".my.cnf", "a credentials file"},
		{"mysql's login path", ".mylogin.cnf", "a credentials file"},
		{"hugging face's token", ".huggingface/token", "is in .huggingface/token"},
		{"hugging face's cached token", ".cache/huggingface/token", "is in .cache/huggingface/token"},
		{"rubygems' key", ".gem/credentials", "is in .gem/credentials"},
		{"yarn's token", ".yarnrc.yml", "a credentials file"},
		{"maven's passwords", ".m2/settings.xml", "is in .m2/settings.xml"},
		{"gradle's tokens", ".gradle/gradle.properties", "is in .gradle/gradle.properties"},
		{"rclone's remotes", ".config/rclone/rclone.conf", "is in .config/rclone"},
		{"s3cmd's keys", ".s3cfg", "a credentials file"},
		{"boto's keys", ".boto", "a credentials file"},
		{"pass's store", ".password-store/bank.gpg", "is in .password-store"},
		{"the desktop keyring", ".local/share/keyrings/login.keyring", "is in .local/share/keyrings"},
		{"pulumi's token", ".pulumi/credentials.json", "is in .pulumi/credentials.json"},
		{"oracle cloud's keys", ".oci/config", "is in .oci"},
		{"hub's token", ".config/hub", "is in .config/hub"},
		{"glab's token", ".config/glab-cli/config.yml", "is in .config/glab-cli"},
		{"doctl's token", ".config/doctl/config.yaml", "is in .config/doctl"},
		{"hcloud's token", ".config/hcloud/cli.toml", "is in .config/hcloud"},
		{"1password's session", ".config/op/config", "is in .config/op"},
		{"tokens node tools keep", ".config/configstore/firebase-tools.json", "is in .config/configstore"},
		{"kaggle's key", ".kaggle/kaggle.json", "is in .kaggle"},
		{"fly's token", ".fly/config.yml", "is in .fly"},
		{"databricks' token", ".databrickscfg", "a credentials file"},
		{"docker's old credentials", ".dockercfg", "a credentials file"},
		{"terraform's token", ".terraformrc", "a credentials file"},
		{"firefox's logins", ".mozilla/firefox/abc.default/logins.json", "is in .mozilla"},
		{"chrome's logins", ".config/google-chrome/Default/Login Data", "is in .config/google-chrome"},
		{"chromium's cookies", ".config/chromium/Default/Cookies", "is in .config/chromium"},
		{"fish's history", ".local/share/fish/fish_history", "a credentials file"},
		{"node's history", ".node_repl_history", "a credentials file"},
		{"redis-cli's history", ".rediscli_history", "a credentials file"},
		{"sqlite's history", ".sqlite_history", "a credentials file"},
		{"mongo's history", ".dbshell", "a credentials file"},
		{"irb's history", ".irb_history", "a credentials file"},
		{"zsh's other history", ".zhistory", "a credentials file"},
		{"ksh's history", ".sh_history", "a credentials file"},
		{"the old 1Password CLI", ".op/config", "is in .op"},
		{"heroku's token", ".config/heroku/config.json", "is in .config/heroku"},
		{"brave's logins", ".config/BraveSoftware/Brave-Browser/Default/Login Data", "is in .config/bravesoftware"},
		{"edge's logins", ".config/microsoft-edge/Default/Login Data", "is in .config/microsoft-edge"},
		{"snap's chromium", "snap/chromium/common/chromium/Default/Cookies", "is in snap/chromium"},
		{"chrome on a mac", "Library/Application Support/Google/Chrome/Default/Login Data",
			"is in library/application support/google/chrome"},
		{"a mac's keychains", "Library/Keychains/login.keychain-db", "is in library/keychains"},
		{"vivaldi on a mac", "Library/Application Support/Vivaldi/Default/Cookies",
			"is in library/application support/vivaldi"},
		// Names a home gives its stores are a project's own below it.
		{"a project's keychain code", "proj/library/keychains/keychain.go", ""},
		{"a project's snap", "proj/snap/firefox/snapcraft.yaml", ""},
		{"a PKCS #12 store", "proj/signing.p12", "a store of private keys"},
		{"a PFX store", "proj/signing.PFX", "a store of private keys"},
		{"a Java keystore", "proj/release.jks", "a store of private keys"},
		{"gemini's settings", ".gemini/settings.json", ""},
		{"a file that merely ends in key", "proj/monkey", ""},
		// Which a .pem or .key holds, a certificate, a key or a slide
		// deck, is known by reading it (TestAPrivateKeyIsNotRead).
		{"a .pem by its name", "proj/tls/ca.pem", ""},
		{"a .key by its name", "proj/talk.key", ""},
		{"a Go file about keys", "proj/key.go", ""},
	}
	for i := range cases {
		write(t, filepath.Join(h.home, cases[i].path), "secret")
		cases[i].path = filepath.Join(h.home, cases[i].path)
	}
	checkResolve(t, h.policy(Config{}), cases)
}

func TestImagesMustBeSmallRegularFiles(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	fifo := filepath.Join(h.proj, "pipe.png")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	if _, err := h.policy(Config{}).ReadImage(fifo); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Errorf("ReadImage(a FIFO) = %v, want a refusal that does not block", err)
	}
}
