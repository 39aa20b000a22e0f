package logfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// plantVictim writes the user's file an attacker would point the log at.
func plantVictim(t *testing.T, dir string) (path, content string) {
	t.Helper()
	path, content = filepath.Join(dir, "victim"), "# the user's file\n"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path, content
}

// checkUntouched fails when the victim's content changed.
func checkUntouched(t *testing.T, victim, want string) {
	t.Helper()
	got, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != want {
		t.Errorf("the log wrote into %s:\n%s", victim, got)
	}
}

// wantRefusal fails unless err refuses path and says what to do.
func wantRefusal(t *testing.T, err error, path, why string) {
	t.Helper()
	if err == nil {
		t.Fatalf("Open(%s) succeeded, want it refused: it %s", path, why)
	}
	for _, s := range []string{path, why, "remove it"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("the refusal %q does not say %q", err, s)
		}
	}
}

// Someone who can write to the log's directory (ZEN_LOG_FILE or
// ZEN_DATA_DIR in /tmp, a directory created before the user's first run)
// places a symlink where the log goes. zen must not append its lines,
// which quote what clients and providers send, to whatever file the link
// names (~/.bashrc, say).
func TestALinkAtThePathIsNotFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim, content := plantVictim(t, dir)
	path := filepath.Join(dir, "zen.log")
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, 1<<20, 2)
	if err == nil {
		_, _ = l.Write([]byte("{\"client\":\"$(touch /tmp/pwned)\"}\n"))
		_ = l.Close()
	}
	wantRefusal(t, err, path, "is a symbolic link")
	checkUntouched(t, victim, content)
}

// A link put at the path while zen runs (after another process rotated
// the file, or in its place) is not followed when zen moves to the file
// at the path: rotating replaces the link with a new file.
func TestALinkPlantedBetweenRotationsIsNotFollowed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim, content := plantVictim(t, dir)
	path := filepath.Join(dir, "zen.log")
	l, err := Open(path, 40, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	write(t, l, strings.Repeat("a", 29)+"\n")
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, path); err != nil {
		t.Fatal(err)
	}
	// The file is full for this line, so Write looks at the path, where
	// the victim has room for it.
	write(t, l, strings.Repeat("b", 14)+"\n")
	checkUntouched(t, victim, content)
	info, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !info.Mode().IsRegular() || info.Mode().Perm() != 0o600 {
		t.Errorf("after rotating, %s has mode %v, want a private regular file", path, info.Mode())
	}
}

// A directory at the path is refused with the same advice.
func TestADirectoryAtThePathIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "zen.log")
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, 1<<20, 2)
	wantRefusal(t, err, path, "is a directory")
}

// Open promises a file readable by the user alone; a file already there
// (made by touch, or under a loose umask) is made private rather than
// keeping its mode, which would let others read every later line.
func TestAnExistingFileIsMadePrivate(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "zen.log")
	if err := os.WriteFile(path, []byte("old\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil { // past the umask
		t.Fatal(err)
	}
	l, err := Open(path, 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("the log file has mode %v, want -rw-------: others can read what zen logs", info.Mode().Perm())
	}
}
