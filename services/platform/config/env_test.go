package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func env(m map[string]string) Getenv { return func(k string) string { return m[k] } }

func TestWithDotEnvLayersUnderTheProcess(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	content := "# comment\nexport A=from-file\nB=\"quoted value\"\nC=x # trailing comment\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	get, err := WithDotEnvFiles([]string{path}, env(map[string]string{"A": "from-process"}))
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"A": "from-process", "B": "quoted value", "C": "x", "D": ""} {
		if got := get(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestForceOverrideMakesDotEnvWin(t *testing.T) {
	path := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(path, []byte("ZEN_MCP_FORCE_ENV_OVERRIDE=true\nA=file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	get, err := WithDotEnvFiles([]string{path}, env(map[string]string{"A": "process", "B": "process"}))
	if err != nil {
		t.Fatal(err)
	}
	if get("A") != "file" || get("B") != "" {
		t.Errorf("A=%q B=%q; want .env only", get("A"), get("B"))
	}
}

// TestForceOverrideReadsAsEveryBool: yes is true, as for every variable
// zen reads as a bool, and a value that is no bool stops zen with its name,
// where it read as false before.
func TestForceOverrideReadsAsEveryBool(t *testing.T) {
	t.Parallel()
	for value, want := range map[string]string{"yes": "file", "off": "process", "maybe": "error"} {
		path := filepath.Join(t.TempDir(), ".env")
		if err := os.WriteFile(path, []byte("ZEN_MCP_FORCE_ENV_OVERRIDE="+value+"\nA=file\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		get, err := WithDotEnvFiles([]string{path}, env(map[string]string{"A": "process"}))
		got := "error"
		if err == nil {
			got = get("A")
		} else if !strings.Contains(err.Error(), "ZEN_MCP_FORCE_ENV_OVERRIDE") {
			t.Errorf("ZEN_MCP_FORCE_ENV_OVERRIDE=%s: the error %q does not name the variable", value, err)
		}
		if got != want {
			t.Errorf("ZEN_MCP_FORCE_ENV_OVERRIDE=%s: A reads %q, want %q", value, got, want)
		}
	}
}

// TestDotEnvFilesLayerInOrder: the process wins, then the first file (the
// working directory's), then the next (the user's); a missing file is
// skipped.
func TestDotEnvFilesLayerInOrder(t *testing.T) {
	dir := t.TempDir()
	project, user := filepath.Join(dir, "project.env"), filepath.Join(dir, "user.env")
	if err := os.WriteFile(project, []byte("A=project\nB=project\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("A=user\nB=user\nC=user\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	get, err := WithDotEnvFiles([]string{project, filepath.Join(dir, "none"), user},
		env(map[string]string{"A": "process"}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"A": get("A"), "B": get("B"), "C": get("C"), "D": get("D")}
	want := map[string]string{"A": "process", "B": "project", "C": "user", "D": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("layered values (-want +got):\n%s", diff)
	}
}

// TestForceOverrideInTheUserFile: the override read from any of the files
// makes the files win, the first one still over the later.
func TestForceOverrideInTheUserFile(t *testing.T) {
	dir := t.TempDir()
	project, user := filepath.Join(dir, "project.env"), filepath.Join(dir, "user.env")
	if err := os.WriteFile(project, []byte("A=project\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(user, []byte("ZEN_MCP_FORCE_ENV_OVERRIDE=true\nA=user\nB=user\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	get, err := WithDotEnvFiles([]string{project, user}, env(map[string]string{
		"A": "process",
		"B": "process",
		"C": "process",
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{"A": get("A"), "B": get("B"), "C": get("C")}
	if diff := cmp.Diff(map[string]string{"A": "project", "B": "user", "C": ""}, got); diff != "" {
		t.Errorf("forced values (-want +got):\n%s", diff)
	}
}

func TestMissingDotEnvIsFineAndBadLinesAreNamed(t *testing.T) {
	if _, err := WithDotEnvFiles([]string{filepath.Join(t.TempDir(), "none")}, env(nil)); err != nil {
		t.Errorf("missing file: %v", err)
	}
	path := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(path, []byte("GOOD=1\nnot a pair\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := WithDotEnvFiles([]string{path}, env(nil)); err == nil || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("err = %v, want one naming line 2", err)
	}
}

func TestParsersNameTheVariable(t *testing.T) {
	get := env(map[string]string{"H": "0.5", "BADH": "-1", "N": "7", "BADN": "x", "T": "yes", "BADT": "maybe", "ADDR": "nohost"})
	if h, err := Hours(get, "H", time.Hour); err != nil || h != 30*time.Minute {
		t.Errorf("Hours = %v, %v", h, err)
	}
	if n, err := Int(get, "N", 1, 0, 10); err != nil || n != 7 {
		t.Errorf("Int = %v, %v", n, err)
	}
	if b, err := Bool(get, "T", false); err != nil || !b {
		t.Errorf("Bool = %v, %v", b, err)
	}
	if d, err := Hours(get, "UNSET", 3*time.Hour); err != nil || d != 3*time.Hour {
		t.Errorf("default = %v, %v", d, err)
	}
	for name, err := range map[string]error{
		"BADH": second(Hours(get, "BADH", 0)), "BADN": second(Int(get, "BADN", 0, 0, 1)),
		"BADT": second(Bool(get, "BADT", false)), "ADDR": second(Addr(get, "ADDR", "")),
	} {
		if err == nil || !strings.HasPrefix(err.Error(), name+"=") {
			t.Errorf("%s: err = %v, want one naming the variable", name, err)
		}
	}
}

func second[T any](_ T, err error) error { return err }
