//go:build unix

package logfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A hard link to the user's file at the path would put every line in that
// file too.
func TestAHardLinkAtThePathIsRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	victim, content := plantVictim(t, dir)
	path := filepath.Join(dir, "zen.log")
	if err := os.Link(victim, path); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path, 1<<20, 2)
	if err == nil {
		_, _ = l.Write([]byte("line\n"))
		_ = l.Close()
	}
	wantRefusal(t, err, path, "has 2 hard links")
	checkUntouched(t, victim, content)
}

// A FIFO at the path is refused at once: opening it to write would wait
// for a reader for ever, and whoever reads it would get the log.
func TestAFIFOAtThePathIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "zen.log")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, 1<<20, 2)
	wantRefusal(t, err, path, "is not a regular file")
}

// A file of another user is refused. Only root can make one, so the check
// is asked about the user's own file with another user's id.
func TestAFileOfAnotherUserIsRefused(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "zen.log")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := notOwned(info, os.Geteuid()); got != "" {
		t.Errorf("the user's own file: %q, want no problem", got)
	}
	other := os.Geteuid() + 1
	if got := notOwned(info, other); !strings.Contains(got, "belongs to user") {
		t.Errorf("a file of another user: %q, want it refused as not the user's", got)
	}
}

// A directory every user may write to, and not sticky, is reported once
// by Open for the caller to log; a private or sticky one is not.
func TestADirectoryOthersMayWriteIsReported(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode os.FileMode
		want bool
	}{
		{mode: 0o700},
		{mode: 0o755},
		{mode: 0o777, want: true},
		{mode: 0o777 | os.ModeSticky},
	} {
		t.Run(tc.mode.String(), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			if err := os.Chmod(dir, tc.mode); err != nil {
				t.Fatal(err)
			}
			l, err := Open(filepath.Join(dir, "zen.log"), 1<<20, 2)
			if err != nil {
				t.Fatal(err)
			}
			defer l.Close()
			got := l.DirProblem()
			if (got != nil) != tc.want {
				t.Fatalf("DirProblem() = %v, want a problem: %v", got, tc.want)
			}
			if got != nil && !strings.Contains(got.Error(), dir) {
				t.Errorf("DirProblem() = %q, want it to name %s", got, dir)
			}
		})
	}
}
