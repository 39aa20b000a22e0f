package sqlitestore

import (
	"os"
	osexec "os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A database zen cannot write is refused when the store opens, saying so:
// it opened read-only without a word, answered reads and readiness
// probes, and every call then ran its model for an answer it could not
// save.
func TestADatabaseThatCannotBeWrittenIsRefusedAtOpen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, chatThread(time.Now().UTC()))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	unwritable(t, path)
	s, err = Open(path)
	if err == nil {
		s.Close()
		t.Fatal("a database that cannot be written opened")
	}
	if !strings.Contains(err.Error(), "writable") {
		t.Errorf("the refusal: %v, want it to say the file must be writable", err)
	}
}

// unwritable makes the file at path one this process cannot write, until
// the test ends: read-only by its mode, or, for root, whom modes do not
// stop, immutable (chattr +i, on a file system that keeps the attribute,
// such as ext4).
func unwritable(t *testing.T, path string) {
	t.Helper()
	if os.Geteuid() != 0 {
		if err := os.Chmod(path, 0o400); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = os.Chmod(path, 0o600) })
		return
	}
	if out, err := osexec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Fatalf("making the database immutable: %v %s (as root this test needs chattr, and a file system "+
			"that keeps the attribute, such as ext4)", err, out)
	}
	t.Cleanup(func() { _ = osexec.Command("chattr", "-i", path).Run() })
}
