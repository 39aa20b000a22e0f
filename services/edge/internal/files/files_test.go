package files

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// rootedAt is a policy whose one root is dir.
func rootedAt(dir string) Policy { return NewPolicy(Config{Roots: []string{dir}}) }

func TestExpandWalksSourceFilesOnly(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "b.go"), "package b")
	write(t, filepath.Join(dir, "a.py"), "x = 1")
	write(t, filepath.Join(dir, "image.png"), "png")
	write(t, filepath.Join(dir, ".hidden.go"), "package h")
	write(t, filepath.Join(dir, "node_modules", "dep.js"), "x")
	write(t, filepath.Join(dir, "sub", "c.md"), "# c")
	got, err := rootedAt(dir).Expand([]string{dir, filepath.Join(dir, "image.png"), filepath.Join(dir, "b.go")})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(dir, "a.py"), filepath.Join(dir, "b.go"), filepath.Join(dir, "sub", "c.md"), filepath.Join(dir, "image.png")}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestReadHashesAndNormalises(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f.txt")
	write(t, p, "a\r\nb\xff")
	f, err := rootedAt(filepath.Dir(p)).Read(p)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte("a\nb\uFFFD"))
	if f.Content != "a\nb\uFFFD" || f.SHA256 != hex.EncodeToString(sum[:]) || f.Size != 5 {
		t.Errorf("got %+v, want the text and the hash of the text", f)
	}
}

// A file's hash is its text's: one that differs from another only in its
// line endings reads as the same file.
func TestLineEndingsAloneAreNoChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	unix, windows := filepath.Join(dir, "unix.go"), filepath.Join(dir, "windows.go")
	write(t, unix, "package a\n")
	write(t, windows, "package a\r\n")
	a, err := rootedAt(dir).Read(unix)
	if err != nil {
		t.Fatal(err)
	}
	b, err := rootedAt(dir).Read(windows)
	if err != nil {
		t.Fatal(err)
	}
	if a.SHA256 != b.SHA256 || a.Content != b.Content {
		t.Errorf("LF %+v and CRLF %+v differ", a, b)
	}
}

// TestReadSkipsWhatItCannotRead: a file the call can go on without is a
// *Skipped error naming the path as given and why; a denied path is not.
func TestReadSkipsWhatItCannotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	write(t, big, strings.Repeat("x", MaxFileBytes+1))
	loop := filepath.Join(dir, "loop.go")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		path, reason string
	}{
		{big, "1000001 bytes, over the 1000000-byte limit for one file"},
		{dir, "not a regular file"},
		{filepath.Join(dir, "missing"), "not found"},
		{loop, "cannot be read: too many links"},
		{filepath.Join(dir, strings.Repeat("x", 300)+".go"), "cannot be read: file name too long"},
	}
	for _, tt := range tests {
		_, err := rootedAt(dir).Read(tt.path)
		var got *Skipped
		if !errors.As(err, &got) {
			t.Errorf("Read(%s) = %v, want a *Skipped", tt.path, err)
			continue
		}
		if diff := cmp.Diff(&Skipped{Path: tt.path, Reason: tt.reason}, got); diff != "" {
			t.Errorf("Read(%s) (-want +got):\n%s", tt.path, diff)
		}
	}
	envLoop := filepath.Join(dir, ".env")
	if err := os.Symlink(envLoop, envLoop); err != nil {
		t.Fatal(err)
	}
	if _, err := rootedAt(dir).Read(envLoop); !errors.Is(err, ErrDenied) || IsSkipped(err) {
		t.Errorf("an unresolvable link with a denied name: %v, want ErrDenied", err)
	}
}

// TestReadEachGoesOnWithoutProblemFiles: the files that can be read are
// read, the others listed, a file named outright under the path the call
// gave, as ExpandWithin lists its own; a path the policy refuses fails the
// lot.
func TestReadEachGoesOnWithoutProblemFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, gone := filepath.Join(dir, "a"), filepath.Join(dir, "gone")
	write(t, a, "x")
	write(t, gone, "y")
	given := filepath.Join(dir, "sub", "..", "gone") // resolves to gone
	write(t, filepath.Join(dir, "sub", "keep"), "")
	exp, err := rootedAt(dir).ExpandWithin([]string{given, a}, 1<<20, AllNamed)
	if err != nil {
		t.Fatal(err)
	}
	// Deleted between the expansion and the read, as an agent's edit may.
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	got, skipped, err := rootedAt(dir).ReadEach(exp)
	if err != nil || len(got) != 1 || got[0].Path != a {
		t.Fatalf("ReadEach = %v, %v", got, err)
	}
	if diff := cmp.Diff([]Skipped{{Path: given, Reason: "not found"}}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	secret := filepath.Join(dir, ".env")
	write(t, secret, "KEY=v")
	if _, _, err := rootedAt(dir).ReadEach(Expansion{Paths: []string{a, secret}}); !errors.Is(err, ErrDenied) {
		t.Errorf("a denied path: %v, want ErrDenied", err)
	}
}

func TestCheckAbsolute(t *testing.T) {
	if err := CheckAbsolute([]string{"/abs", "rel/x"}); err == nil || !strings.Contains(err.Error(), `"rel/x"`) {
		t.Errorf("err = %v, want one naming rel/x", err)
	}
	if err := CheckAbsolute([]string{"/abs", "~/x"}); err != nil {
		t.Errorf("err = %v", err)
	}
}

// A path longer than any path can be is refused without being quoted
// back, whichever check meets it first.
func TestAPathLongerThanAnyPathIsNotQuoted(t *testing.T) {
	t.Parallel()
	pol := rootedAt(t.TempDir())
	for _, p := range []string{"/" + strings.Repeat("\u0085", 1<<20), strings.Repeat("x", 1<<20)} {
		errs := map[string]error{"CheckAbsolute": CheckAbsolute([]string{p})}
		_, errs["Resolve"] = pol.Resolve(p)
		_, errs["ReadImage"] = pol.ReadImage(p + ".png")
		for name, err := range errs {
			if err == nil || len(err.Error()) > 1<<10 || !strings.Contains(err.Error(), "longer than") {
				t.Errorf("%s of a path of %d bytes: %.200v (%d bytes); want a refusal under 1 KiB saying it is "+
					"too long", name, len(p), err, len(fmt.Sprint(err)))
			}
		}
	}
}

// TestAWalkSkipsNamesThatAreNotUTF8: a file or directory whose name is not
// UTF-8 (Linux allows any bytes) made every call naming its directory
// fail: a path travels between zen's roles as text, which must be UTF-8.
// Such a file cannot be named by a client either, so the walk leaves it.
func TestAWalkSkipsNamesThatAreNotUTF8(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, filepath.Join(dir, "good.py"), "x = 1")
	write(t, filepath.Join(dir, "bad\xffname.py"), "x = 2")
	write(t, filepath.Join(dir, "d\xfe", "inside.py"), "x = 3")
	if err := os.Symlink(filepath.Join(dir, "bad\xffname.py"), filepath.Join(dir, "link.py")); err != nil {
		t.Fatal(err)
	}
	got, err := rootedAt(dir).Expand([]string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{filepath.Join(dir, "good.py")}; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestAPrivateKeyIsNotRead: a file that holds a private key (in PEM in
// any case, in base64 as a Kubernetes Secret holds one, in PuTTY's or
// SSH2's form, pasted into code) is left out, saying why; a certificate is
// read. A .key, .pem, .der or .p8 that is not text (DER, a slide deck) is
// left out too: a DER key is binary, and its bytes went to the model.
func TestAPrivateKeyIsNotRead(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	files := map[string]string{
		"tls/key.pem":  "-----BEGIN PRIVATE KEY-----\nMIIEvQ\n-----END PRIVATE KEY-----\n",
		"tls/rsa.key":  "-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\n",
		"ssh.txt":      "-----BEGIN OPENSSH PRIVATE KEY-----\nb3Bl\n-----END OPENSSH PRIVATE KEY-----\n",
		"pgp.asc":      "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQ\n-----END PGP PRIVATE KEY BLOCK-----\n",
		"sign.go":      "package sign\n\nconst key = `-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----`\n",
		"lower.txt":    "-----begin private key-----\nMIIE\n-----end private key-----\n",
		"dh.pem":       "-----BEGIN X9.42 DH PRIVATE KEY-----\nMIIC\n-----END X9.42 DH PRIVATE KEY-----\n",
		"ssh2.txt":     "---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nP2/56w\n---- END SSH2 ENCRYPTED PRIVATE KEY ----\n",
		"putty.txt":    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n",
		"secret.yaml":  "data:\n  tls.key: " + base64.StdEncoding.EncodeToString([]byte("-----BEGIN RSA PRIVATE KEY-----\nMIIE\n")) + "\n",
		"server.key":   "0\x82\x04\xa4\x02\x01\x00\x02\x82\x01\x01\x00\xc3", // DER
		"talk.key":     "PK\x03\x04\x14\x00\x00\x00\x08\x00",                // a Keynote deck: a zip
		"tls/ca.pem":   "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n",
		"docs/keys.md": "Never commit a file holding BEGIN PRIVATE KEY.\n",
		"tls/pub.pem":  "-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n",
		"cert.yaml":    "data:\n  tls.crt: " + base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n")) + "\n",
		// A certificate and its key, as HAProxy takes them, in base64: the
		// key's header lands at any alignment.
		"bundle.yaml": "tls.pem: " + base64.StdEncoding.EncodeToString([]byte("-----BEGIN CERTIFICATE-----\nMIIB\n"+
			"-----END CERTIFICATE-----\n\n-----BEGIN EC PRIVATE KEY-----\nMHcC\n-----END EC PRIVATE KEY-----\n")) + "\n",
		"age.txt":   "# created: 2026-01-01\nAGE-SECRET-KEY-1QQPQ\n",
		"putty.go":  "package putty\n\n// Files begin \"PuTTY-User-Key-File-3: \", then name the key.\n",
		"begin.sql": "BEGIN;\nUPDATE keys SET private = true;\nCOMMIT;\n",
		// JSON Web Keys: a private one has "d" (EC, RSA, OKP) or is a
		// secret key ("k", kty "oct"); a public one has neither.
		"jwk.json": `{"kty":"EC","crv":"P-256","x":"f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",` +
			`"y":"x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0","d":"jpsQnnGQmL-YBIffH1136cLyG5-0ACXWzz1lkT0k2Ao"}`,
		"jwks.json": "{\n  \"keys\": [\n    {\n      \"kty\": \"oct\",\n      \"k\": " +
			"\"GawgguFyGrWKav7AX4VKUg\"\n    }\n  ]\n}\n",
		"jwk-public.json": `{"kty":"RSA","n":"0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86z` +
			`wu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-` +
			`65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQF` +
			`h6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw","e":"AQAB","alg":"RS256"}`,
		"jwt.md": "A JWK holds \"kty\"; a private one also holds \"d\": \"...\".\n",
	}
	for pad := range 3 { // the key's header at each alignment of base64's blocks
		files[fmt.Sprintf("pad%d.yaml", pad)] = "key: " + base64.StdEncoding.EncodeToString([]byte(
			strings.Repeat("#", pad)+"\n-----BEGIN RSA PRIVATE KEY-----\nMIIE\n")) + "\n"
	}
	got := map[string]string{}
	for name, content := range files {
		p := filepath.Join(dir, name)
		write(t, p, content)
		_, err := rootedAt(dir).Read(p)
		got[name] = ""
		if s, ok := asSkipped(err); ok {
			got[name] = s.Reason
		} else if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	const key, binary = "holds a private key, which zen never sends to a model",
		"is not text, and a file of that name may hold a private key, which zen never sends to a model"
	want := map[string]string{"tls/key.pem": key, "tls/rsa.key": key, "ssh.txt": key, "pgp.asc": key, "sign.go": key,
		"lower.txt": key, "dh.pem": key, "ssh2.txt": key, "putty.txt": key, "secret.yaml": key, "server.key": binary,
		"talk.key": binary, "tls/ca.pem": "", "docs/keys.md": "", "tls/pub.pem": "", "cert.yaml": "",
		"bundle.yaml": key, "age.txt": key, "putty.go": "", "begin.sql": "", "pad0.yaml": key, "pad1.yaml": key,
		"pad2.yaml": key, "jwk.json": key, "jwks.json": key, "jwk-public.json": "", "jwt.md": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reasons (-want +got):\n%s", diff)
	}
}
