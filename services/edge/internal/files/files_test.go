package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
	if f.Content != "a\nb\uFFFD" || len(f.SHA256) != 64 || f.Size != 5 {
		t.Errorf("got %+v", f)
	}
}

func TestReadRefusesLargeFilesAndDirectories(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	write(t, big, strings.Repeat("x", MaxFileBytes+1))
	for _, p := range []string{big, dir, filepath.Join(dir, "missing")} {
		if _, err := rootedAt(dir).Read(p); err == nil {
			t.Errorf("Read(%s) succeeded", p)
		}
	}
}

func TestReadAllFailsOnTheFirstUnreadable(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	write(t, a, "x")
	if got, err := rootedAt(dir).ReadAll([]string{a}); err != nil || len(got) != 1 {
		t.Errorf("ReadAll = %v, %v", got, err)
	}
	if _, err := rootedAt(dir).ReadAll([]string{a, filepath.Join(dir, "missing")}); err == nil {
		t.Error("a missing file should fail the read")
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
