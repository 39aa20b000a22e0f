package files

import (
	"bytes"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// systemDirs are denied with everything below them: the system's
// configuration and programs, and the kernel's and runtime's views of the
// process (/proc/self/environ holds zen's own environment).
var systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib64", "/var", "/root", "/boot", "/proc", "/sys",
	"/dev", "/run", "/private/etc", "/private/var"}

// homeParents hold home directories: the parent itself and each direct
// child (a whole home) are denied; deeper paths are a project's.
var homeParents = []string{"/home", "/Users"}

// secretDirs hold keys and credentials. They are denied wherever they sit,
// not only in the home directory: a copy in a project is just as secret.
var secretDirs = [][]string{
	{".ssh"}, {".gnupg"}, {".aws"}, {".azure"}, {".kube"}, {".config", "gcloud"}, {".docker", "config.json"},
	// the agent CLIs' and other tools' logins
	{".config", "gh"}, {".codex", "auth.json"}, {".claude", ".credentials.json"}, {".config", "containers", "auth.json"},
	{".cargo", "credentials"}, {".cargo", "credentials.toml"}, {".terraform.d", "credentials.tfrc.json"},
	{".config", "git", "credentials"}, {".gemini", "oauth_creds.json"}, {".huggingface", "token"},
	{".cache", "huggingface", "token"}, {".gem", "credentials"}, {".m2", "settings.xml"},
	{".gradle", "gradle.properties"}, {".config", "rclone"}, {".password-store"}, {".local", "share", "keyrings"},
	{".pulumi", "credentials.json"}, {".oci"}, {".config", "hub"}, {".config", "glab-cli"}, {".config", "doctl"},
	{".config", "hcloud"}, {".config", "op"}, {".config", "configstore"}, {".kaggle"}, {".fly"},
	{".op"}, {".config", "heroku"},
	// browsers' saved logins and cookies (in lower case: paths are
	// compared folded)
	{".mozilla"}, {".config", "google-chrome"}, {".config", "chromium"}, {".config", "bravesoftware"},
	{".config", "microsoft-edge"}, {".config", "vivaldi"},
}

// homeSecretDirs hold keys and credentials right under a home directory
// (the user's, or any under homeParents): names a project may well use
// for its own code below it (library/, snap/), unlike secretDirs'.
var homeSecretDirs = [][]string{
	{"snap", "chromium"}, {"snap", "firefox"}, {"library", "keychains"},
	// browsers' and password managers' stores on macOS
	{"library", "application support", "google", "chrome"}, {"library", "application support", "chromium"},
	{"library", "application support", "firefox"}, {"library", "application support", "bravesoftware"},
	{"library", "application support", "microsoft edge"}, {"library", "application support", "vivaldi"},
	{"library", "application support", "1password"},
}

// secretFiles are credential files and private keys, by name.
var secretFiles = []string{".netrc", "_netrc", ".git-credentials", ".npmrc", ".pypirc", ".pgpass",
	"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".vault-token", ".envrc", ".my.cnf", ".mylogin.cnf", ".yarnrc.yml",
	".s3cfg", ".boto", ".databrickscfg", ".dockercfg", ".terraformrc",
	// shells' and consoles' histories hold the secrets typed on command lines
	".bash_history", ".zsh_history", ".zhistory", ".sh_history", ".history", ".python_history", ".psql_history",
	".mysql_history", "fish_history",
	".node_repl_history", ".rediscli_history", ".sqlite_history", ".dbshell", ".irb_history"}

// keyExtensions name the stores of private keys, by the end of a file's
// name. A .pem or .key may hold a certificate (or be a slide deck): a
// private key in one, or in any file, is found by reading it
// (holdsPrivateKey).
var keyExtensions = []string{".p12", ".pfx", ".jks", ".keystore", ".ppk"}

// privateKeyBlock begins a private key as text: in PEM (PKCS #8 and the
// older RSA, EC, DSA and DH forms, OpenSSH's, an encrypted one, OpenPGP's)
// or SSH2's, in any case; PuTTY's file, whose first line names it; an age
// identity.
var privateKeyBlock = regexp.MustCompile(`(?i)-{4,5} ?BEGIN [A-Z0-9 .\-]*PRIVATE KEY(?: BLOCK)? ?-{4,5}|` +
	`(?m)^PuTTY-User-Key-File-\d+: |AGE-SECRET-KEY-1`)

// keyWords are what a file holding one of privateKeyBlock's keys holds
// as it is written, found before the expression runs: every file read
// passes here, and many hold "begin".
var keyWords = [][]byte{[]byte("PRIVATE KEY"), []byte("private key"), []byte("Private Key"),
	[]byte("PuTTY-User-Key-File-"), []byte("AGE-SECRET-KEY-1")}

// privateKeyIn64 is "PRIVATE KEY" in base64 at each of its three
// alignments, as a Kubernetes Secret or a config holds a PEM file.
var privateKeyIn64 = [][]byte{[]byte("UFJJVkFURSBLRVk"), []byte("QUklWQVRFIEtFW"), []byte("SVZBVEUgS0VZ")}

// jwkSecret is the member of a JSON Web Key that makes it secret: "d", a
// private key's (EC, RSA, OKP), or "k", a symmetric key's; one of a file
// that names a key type ("kty") is taken for a key's.
var jwkSecret = regexp.MustCompile(`"[dk]"\s*:\s*"[A-Za-z0-9_-]{16,}={0,2}"`)

// holdsPrivateKey reports whether a file's content holds a private key as
// text, a PEM one in base64, or a JSON Web Key that is secret. What it does
// not know (a key's base64 without its header, split across string
// literals, in UTF-16 or an encoding of its own) it lets through: the deny
// list by name is the first rule.
func holdsPrivateKey(content []byte) bool {
	if bytes.Contains(content, []byte(`"kty"`)) && jwkSecret.Match(content) {
		return true
	}
	if slices.ContainsFunc(keyWords, func(w []byte) bool { return bytes.Contains(content, w) }) &&
		privateKeyBlock.Match(content) {
		return true
	}
	for _, w := range privateKeyIn64 {
		for rest := content; ; {
			i := bytes.Index(rest, w)
			if i < 0 {
				break
			}
			if decodedHoldsKey(base64Run(rest, i)) {
				return true
			}
			rest = rest[i+len(w):]
		}
	}
	return false
}

// base64Run is the run of base64 characters in b around b[i].
func base64Run(b []byte, i int) []byte {
	in := func(c byte) bool {
		return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/'
	}
	start, end := i, i
	for start > 0 && in(b[start-1]) {
		start--
	}
	for end < len(b) && in(b[end]) {
		end++
	}
	return b[start:end]
}

// decodedHoldsKey reports whether run, base64 that may start anywhere in
// its encoding's blocks, decodes to a private key's header.
func decodedHoldsKey(run []byte) bool {
	for skip := range 4 {
		if skip >= len(run) {
			return false
		}
		b64 := run[skip:]
		b64 = b64[:len(b64)/4*4]
		text := make([]byte, base64.StdEncoding.DecodedLen(len(b64)))
		if n, err := base64.StdEncoding.Decode(text, b64); err == nil && privateKeyBlock.Match(text[:n]) {
			return true
		}
	}
	return false
}

// keyNames are the extensions of files that hold a key or a certificate,
// as text (PEM) or not (DER): one that is not text is not read, since
// holdsPrivateKey reads text alone.
var keyNames = []string{".key", ".pem", ".der", ".p8", ".pk8"}

// binaryKey reports whether a file named path, holding content, is one of
// keyNames's that is not text.
func binaryKey(path string, content []byte) bool {
	return slices.Contains(keyNames, strings.ToLower(filepath.Ext(path))) &&
		(!utf8.Valid(content) || bytes.IndexByte(content, 0) >= 0)
}

// envTemplates are .env variants meant to be committed, with placeholders
// instead of values; every other .env file is taken to hold secrets.
var envTemplates = []string{".env.example", ".env.sample", ".env.template", ".env.dist"}

// denied says why a resolved path may never be read, or "". Names are
// compared without regard to case: on a case-insensitive disk (macOS's and
// Windows' defaults) ~/.SSH is ~/.ssh, and denying a differently cased
// name elsewhere costs nothing. (Roots, which allow, compare exactly.)
func (p Policy) denied(path string) string {
	if path == "/" || filepath.VolumeName(path)+`\` == path {
		return "is the filesystem root"
	}
	folded := strings.ToLower(path)
	// The user's own home is theirs even where it sits among system
	// directories (/root, when zen runs as root in a container).
	inHome := p.home != "" && p.home != "/" && within(path, filepath.Clean(p.home))
	for _, d := range systemDirs {
		if within(folded, d) && !inHome {
			return "is a system directory"
		}
	}
	for _, parent := range homeParents {
		if path == parent || filepath.Dir(path) == parent {
			return "is a home directory root"
		}
	}
	if p.home != "" && filepath.Clean(p.home) == path {
		return "is your home directory root"
	}
	if p.ownFile(path, folded) {
		return ownReason
	}
	if reason := p.homeSecretReason(folded); reason != "" {
		return reason
	}
	return secretReason(folded)
}

// homeSecretReason says why a path (folded) names a store of
// homeSecretDirs, right under the user's home or another, or "".
func (p Policy) homeSecretReason(folded string) string {
	if reason := homeStoreReason(folded, p.foldedHome); reason != "" {
		return reason
	}
	for _, parent := range foldedHomeParents {
		if rest, ok := strings.CutPrefix(folded, parent+"/"); ok {
			user, _, _ := strings.Cut(rest, "/")
			return homeStoreReason(folded, parent+"/"+user)
		}
	}
	return ""
}

// foldedHomeParents are homeParents as deny rules compare paths.
var foldedHomeParents = func() []string {
	out := make([]string, len(homeParents))
	for i, p := range homeParents {
		out[i] = strings.ToLower(p)
	}
	return out
}()

// homeStoreReason says why folded names a store of homeSecretDirs right
// under home (folded too), or "".
func homeStoreReason(folded, home string) string {
	rest, ok := strings.CutPrefix(folded, home+"/")
	if home == "" || !ok {
		return ""
	}
	parts := strings.Split(filepath.ToSlash(rest), "/")
	for _, d := range homeSecretDirs {
		if len(d) <= len(parts) && slices.Equal(parts[:len(d)], d) {
			return "is in " + strings.Join(d, "/") + ", which holds keys and credentials"
		}
	}
	return ""
}

// deniedByName is denied without touching the disk, for a path that has
// not been resolved: whether zen's own files are below it is left out.
func (p Policy) deniedByName(path string) string {
	p.own = nil // a copy: the caller's policy keeps its own files
	return p.denied(path)
}

// ownReason is why one of zen's own files is denied.
const ownReason = "is one of the files zen reads its own configuration or secrets from"

// ownFile tells whether path is one of zen's own files or below one of its
// directories: by name as configured and as it resolves now, and by
// identity, so a hard link or another spelling of the path does not reach
// it either.
func (p Policy) ownFile(path, folded string) bool {
	for _, o := range p.own {
		if within(folded, strings.ToLower(o)) || within(folded, strings.ToLower(resolveExisting(o))) {
			return true
		}
	}
	info, err := os.Stat(path)
	return err == nil && !info.IsDir() && p.ownIdentity(info)
}

// secretReason says why a path names keys or credentials, or "".
func secretReason(path string) string {
	parts := strings.Split(filepath.ToSlash(path), "/")
	for i := range parts {
		for _, d := range secretDirs {
			if i+len(d) <= len(parts) && slices.Equal(parts[i:i+len(d)], d) {
				return "is in " + strings.Join(d, "/") + ", which holds keys and credentials"
			}
		}
	}
	base := filepath.Base(path)
	if slices.Contains(secretFiles, base) {
		return "is " + base + ", a credentials file"
	}
	if slices.Contains(keyExtensions, filepath.Ext(base)) {
		return "is " + base + ", a store of private keys"
	}
	if envFile(base) && !slices.Contains(envTemplates, base) {
		return "is a .env file, which holds secrets"
	}
	return ""
}

// envFile tells whether a base name is a dotenv file: .env and its
// variants .env.local, .env-prod, .env_test.
func envFile(base string) bool {
	rest, ok := strings.CutPrefix(base, ".env")
	return ok && (rest == "" || strings.ContainsAny(rest[:1], ".-_"))
}
