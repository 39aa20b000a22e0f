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
// save. The file is made immutable (chattr +i), which holds for root too,
// whom file modes do not stop.
func TestADatabaseThatCannotBeWrittenIsRefusedAtOpen(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("chattr +i takes root; as anyone else, the file's mode makes the test (this machine and CI run as root)")
	}
	path := filepath.Join(t.TempDir(), "memory.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	create(t, s, chatThread(time.Now().UTC()))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := osexec.Command("chattr", "+i", path).CombinedOutput(); err != nil {
		t.Fatalf("making the database immutable: %v %s (this test needs chattr, root, and a file system "+
			"that keeps the attribute, such as ext4)", err, out)
	}
	t.Cleanup(func() { _ = osexec.Command("chattr", "-i", path).Run() })
	s, err = Open(path)
	if err == nil {
		s.Close()
		t.Fatal("a database that cannot be written opened")
	}
	if !strings.Contains(err.Error(), "writable") {
		t.Errorf("the refusal: %v, want it to say the file must be writable", err)
	}
}
