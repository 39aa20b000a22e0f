package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestWriteFile(t *testing.T) {
	t.Parallel()
	const name = "zen_generated.code"
	tests := []struct {
		name string
		// plant prepares the home; it returns the directory to write in.
		plant func(t *testing.T, h secretHome) string
		want  string // in the error; "" means written
	}{
		{"a new file in the project", func(t *testing.T, h secretHome) string { return h.proj }, ""},
		{"over an earlier regular file", func(t *testing.T, h secretHome) string {
			write(t, filepath.Join(h.proj, name), "old code")
			return h.proj
		}, ""},
		{"a link planted at the name", func(t *testing.T, h secretHome) string {
			must(t, os.Symlink(filepath.Join(h.outside, "secret.txt"), filepath.Join(h.proj, name)))
			return h.proj
		}, "is a symbolic link; zen never writes through a link"},
		{"a dangling link planted at the name", func(t *testing.T, h secretHome) string {
			must(t, os.Symlink(filepath.Join(h.outside, "new.txt"), filepath.Join(h.proj, name)))
			return h.proj
		}, "is a symbolic link"},
		{"a directory at the name", func(t *testing.T, h secretHome) string {
			must(t, os.Mkdir(filepath.Join(h.proj, name), 0o755))
			return h.proj
		}, "exists and is not a regular file"},
		{"a fifo at the name", func(t *testing.T, h secretHome) string {
			must(t, syscall.Mkfifo(filepath.Join(h.proj, name), 0o644))
			return h.proj
		}, "exists and is not a regular file"},
		{"a working directory outside the roots", func(t *testing.T, h secretHome) string { return h.outside }, "is outside"},
		{"a working directory that links out of the roots", func(t *testing.T, h secretHome) string {
			return filepath.Join(h.proj, "outside-dir")
		}, "is outside"},
		{"a credential store", func(t *testing.T, h secretHome) string {
			return filepath.Join(h.home, ".ssh")
		}, "is in .ssh"},
		{"a system directory", func(t *testing.T, h secretHome) string { return "/var/tmp" }, "system directory"},
		{"a missing directory", func(t *testing.T, h secretHome) string { return filepath.Join(h.proj, "nope") }, "open"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newSecretHome(t)
			dir := tt.plant(t, h)
			before := snapshot(t, h.outside)
			got, err := h.policy(Config{}).WriteFile(dir, name, []byte("new code\n"))
			if diff := cmp.Diff(before, snapshot(t, h.outside)); diff != "" {
				t.Errorf("the write changed files outside the roots (-before +after):\n%s", diff)
			}
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("WriteFile(%s) = %q, %v; want an error containing %q", dir, got, err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			raw, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || string(raw) != "new code\n" || got != filepath.Join(dir, name) {
				t.Errorf("wrote %q to %s (%v), want new code at %s", raw, got, err, filepath.Join(dir, name))
			}
			if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*.tmp")); len(leftovers) > 0 {
				t.Errorf("temporary files left behind: %v", leftovers)
			}
		})
	}
}

func TestSharedServerWritesNothing(t *testing.T) {
	t.Parallel()
	h := newSecretHome(t)
	pol := h.policy(Config{Shared: "its MCP listener 0.0.0.0:8080 is not on loopback", Roots: []string{h.proj}})
	_, err := pol.WriteFile(h.proj, "zen_generated.code", []byte("code"))
	if !errors.Is(err, ErrNoWrites) {
		t.Errorf("err = %v, want ErrNoWrites", err)
	}
	if _, err := os.Lstat(filepath.Join(h.proj, "zen_generated.code")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a shared server wrote the file: %v", err)
	}
}

// snapshot is every file under dir with its content (a link as its
// target), to show that nothing changed.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		switch {
		case err != nil:
			return err
		case info.Mode()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			out[p] = "-> " + target
		case info.Mode().IsRegular():
			raw, _ := os.ReadFile(p)
			out[p] = string(raw)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestAWriteKeepsTheModeOfTheFileItReplaces: the new file was made 0644
// and renamed over the old, so a zen_generated.code its owner had made
// 0600 became readable by every user of the machine.
func TestAWriteKeepsTheModeOfTheFileItReplaces(t *testing.T) {
	t.Parallel()
	const name = "zen_generated.code"
	for _, mode := range []os.FileMode{0o600, 0o640, 0o644} {
		h := newSecretHome(t)
		p := filepath.Join(h.proj, name)
		write(t, p, "old code")
		must(t, os.Chmod(p, mode))
		if _, err := h.policy(Config{}).WriteFile(h.proj, name, []byte("new code\n")); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if got := info.Mode().Perm(); got != mode {
			t.Errorf("a %v file replaced: %v", mode, got)
		}
	}
}
