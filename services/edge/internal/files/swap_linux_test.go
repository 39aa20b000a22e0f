package files

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// Without openat2 (ENOSYS, or a seccomp profile's EPERM), a path is
// opened without following its last name and the kernel is asked which
// file it opened: a link anywhere on the way is refused.
func TestOpeningWithoutOpenat2RefusesALinkOnThePath(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, filepath.Join(root, "dir", "notes.txt"), "notes")
	if err := os.Symlink(filepath.Join(root, "dir"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "dir", "notes.txt"), filepath.Join(root, "dir", "last")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(root, "link", "notes.txt"), filepath.Join(root, "dir", "last")} {
		if f, err := openAndAsk(p); !errors.Is(err, errMoved) {
			if f != nil {
				_ = f.Close()
			}
			t.Errorf("openAndAsk(%s): %v; want it refused as moved", p, err)
		}
	}
	f, err := openAndAsk(filepath.Join(root, "dir", "notes.txt"))
	if err != nil {
		t.Fatalf("openAndAsk of a path without links: %v", err)
	}
	_ = f.Close()
}
