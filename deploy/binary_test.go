package deploy

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// zenBin is built the way deploy/Dockerfile builds it.
var zenBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zen-deploy-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	zenBin = filepath.Join(dir, "zen")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", zenBin, ".")
	build.Dir = "../cmd/zen"
	build.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off", "GOFLAGS=-buildvcs=false")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build zen as the Dockerfile does:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestImageBinaryIsStatic: the image has no libc, so the binary must not
// need one.
func TestImageBinaryIsStatic(t *testing.T) {
	f, err := elf.Open(zenBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Fatal("the zen binary asks for a dynamic loader; the scratch image has none")
		}
	}
	dockerfile, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"CGO_ENABLED=0", "GOWORK=off", "FROM scratch", "USER 65532:65532", `ENTRYPOINT ["/zen"]`, "-trimpath"} {
		if !strings.Contains(string(dockerfile), want) {
			t.Errorf("the Dockerfile lost %q, which this test relies on", want)
		}
	}
}

var flagVariable = regexp.MustCompile(`\((ZEN_[A-Z_]+|LOG_LEVEL)\)`)

// flagVariables are the variables named in each role's flag help.
func flagVariables(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, role := range []string{"memory", "router", "executor", "edge", "gateway"} {
		help, _ := exec.Command(zenBin, role, "-h").CombinedOutput()
		for _, m := range flagVariable.FindAllStringSubmatch(string(help), -1) {
			out = append(out, m[1])
		}
	}
	if len(out) == 0 {
		t.Fatal("zen -h names no variables")
	}
	return out
}

// TestREADMEVariablesAreRead: every variable in the README's table is one
// the code reads, so the table can vouch for the manifests.
func TestREADMEVariablesAreRead(t *testing.T) {
	var source strings.Builder
	for _, root := range []string{"../services", "../cmd/zen", "../gateway"} {
		_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				b, _ := os.ReadFile(p)
				source.Write(b)
			}
			return nil
		})
	}
	for name := range knownVariables(t) {
		if !strings.Contains(source.String(), `"`+name+`"`) && !strings.Contains(source.String(), `"`+strings.TrimSuffix(name, "_API_KEY")) {
			t.Errorf("the README lists %s, which no code reads", name)
		}
	}
}
