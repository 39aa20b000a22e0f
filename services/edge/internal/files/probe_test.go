package files

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestLinksDoNotRevealWhatLiesOutsideTheRoots: a client who can place a
// link inside the roots (or finds one) must learn nothing of the disk
// past it. Each pair differs only in whether something exists outside
// the roots, and both of a pair must be refused as outside them; a link
// that stays inside resolves to where it points, existing or not.
func TestLinksDoNotRevealWhatLiesOutsideTheRoots(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	home, outside := filepath.Join(base, "home"), filepath.Join(base, "outside")
	probe := filepath.Join(home, "probe")
	write(t, filepath.Join(outside, "secret.txt"), "outside")
	write(t, filepath.Join(outside, "real", "kept.txt"), "outside")
	write(t, filepath.Join(home, "proj", "main.go"), "package main")
	for name, target := range map[string]string{
		"kept":      filepath.Join(outside, "secret.txt"),
		"gone":      filepath.Join(outside, "missing.txt"),
		"rel-kept":  "../../outside/secret.txt",
		"rel-gone":  "../../outside/missing.txt",
		"dir":       outside,
		"to-gone":   filepath.Join(probe, "gone"), // a link to a dangling link
		"to-kept":   filepath.Join(probe, "kept"),
		"soon":      filepath.Join(home, "proj", "later.go"),
		"loop-a":    filepath.Join(probe, "loop-b"),
		"loop-b":    filepath.Join(probe, "loop-a"),
		"proj-link": filepath.Join(home, "proj"),
	} {
		must(t, os.MkdirAll(probe, 0o755))
		must(t, os.Symlink(target, filepath.Join(probe, name)))
	}
	pol := NewPolicy(Config{Home: home})
	answer := func(path string) string {
		_, err := pol.Resolve(filepath.Join(probe, path))
		switch {
		case err == nil:
			return "allowed"
		case errors.Is(err, ErrDenied) && strings.Contains(err.Error(), "is outside the directories zen may read"):
			return "outside"
		}
		return err.Error()
	}
	for _, pair := range [][2]string{
		{"kept", "gone"},
		{"rel-kept", "rel-gone"},
		{"to-kept", "to-gone"},
		{"dir/real/nosuch.txt", "dir/nosuch/x.txt"},
		{"dir/real/kept.txt", "dir/nosuch"},
	} {
		got := [2]string{answer(pair[0]), answer(pair[1])}
		if diff := cmp.Diff([2]string{"outside", "outside"}, got); diff != "" {
			t.Errorf("%s and %s (-want +got):\n%s", pair[0], pair[1], diff)
		}
	}
	for path, want := range map[string]string{
		"soon":                "allowed", // a missing file inside: the caller says it is not found
		"proj-link/nosuch.go": "allowed",
		"proj-link/main.go":   "allowed",
	} {
		if got := answer(path); got != want {
			t.Errorf("%s: %s, want %s", path, got, want)
		}
	}
	if got := answer("loop-a"); got == "allowed" || got == "outside" {
		t.Errorf("a loop of links inside the roots: %s, want it refused as unreadable", got)
	}
}

// TestResolveAsFarAsExists: where the path exists it resolves as
// filepath.EvalSymlinks does; past that the rest is kept as given.
func TestResolveAsFarAsExists(t *testing.T) {
	t.Parallel()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	write(t, filepath.Join(base, "a", "b", "f.txt"), "x")
	must(t, os.Symlink("a/b", filepath.Join(base, "ab")))
	must(t, os.Symlink("../ab/f.txt", filepath.Join(base, "a", "up")))
	must(t, os.Symlink(filepath.Join(base, "a"), filepath.Join(base, "abs")))
	for _, p := range []string{"a/b/f.txt", "ab/f.txt", "a/up", "abs/b", "abs/up", "ab/../ab"} {
		path := filepath.Join(base, p)
		want, err := filepath.EvalSymlinks(path)
		must(t, err)
		if got, err := resolveAsFarAsExists(path); got != want || err != nil {
			t.Errorf("%s: %q, %v; want %q as EvalSymlinks gives", p, got, err, want)
		}
	}
	for _, tt := range []struct {
		path, want string
		fails      bool // with want as far as it resolved
	}{
		{path: "ab/nosuch/x", want: "a/b/nosuch/x"},
		{path: "abs/../ab/nosuch", want: "a/b/nosuch"},
		{path: "abs/up/x", want: "a/b/f.txt", fails: true}, // a file is no directory
	} {
		got, err := resolveAsFarAsExists(filepath.Join(base, tt.path))
		if want := filepath.Join(base, tt.want); got != want || (err != nil) != tt.fails {
			t.Errorf("%s: %q, %v; want %q, failing: %v", tt.path, got, err, want, tt.fails)
		}
	}
}
