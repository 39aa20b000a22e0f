package logfile

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// contents are the files of dir by name.
func contents(t *testing.T, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		got[e.Name()] = string(b)
	}
	return got
}

func write(t *testing.T, l *File, lines ...string) {
	t.Helper()
	for _, s := range lines {
		if n, err := l.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("write %q: %d, %v", s, n, err)
		}
	}
}

func TestRotation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		before map[string]string // files there before Open
		lines  []string
		want   map[string]string
	}{
		{
			name:  "under the limit",
			lines: []string{"aaaa\n", "bbbb\n"},
			want:  map[string]string{"zen.log": "aaaa\nbbbb\n"},
		},
		{
			name:  "a line that would pass the limit starts a new file",
			lines: []string{"aaaa\n", "bbbb\n", "cccc\n"},
			want:  map[string]string{"zen.log": "cccc\n", "zen.log.1": "aaaa\nbbbb\n"},
		},
		{
			name:  "the oldest file is dropped",
			lines: []string{"aaaa\n", "bbbb\n", "cccc\n", "dddd\n", "eeee\n", "ffff\n", "gggg\n"},
			want:  map[string]string{"zen.log": "gggg\n", "zen.log.1": "eeee\nffff\n", "zen.log.2": "cccc\ndddd\n"},
		},
		{
			name:   "a file full from an earlier run is rotated at the first line",
			before: map[string]string{"zen.log": "earlier\n", "zen.log.1": "older\n"},
			lines:  []string{"aaaa\n"},
			want:   map[string]string{"zen.log": "aaaa\n", "zen.log.1": "earlier\n", "zen.log.2": "older\n"},
		},
		{
			name:   "a file with room is appended to",
			before: map[string]string{"zen.log": "old\n"},
			lines:  []string{"aaaa\n"},
			want:   map[string]string{"zen.log": "old\naaaa\n"},
		},
		{
			name:  "a line longer than the limit gets a file of its own",
			lines: []string{"aaaa\n", "a very long line\n", "bbbb\n"},
			want:  map[string]string{"zen.log": "bbbb\n", "zen.log.1": "a very long line\n", "zen.log.2": "aaaa\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for name, s := range tc.before {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			l, err := Open(filepath.Join(dir, "zen.log"), 10, 2)
			if err != nil {
				t.Fatal(err)
			}
			write(t, l, tc.lines...)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, contents(t, dir)); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

// Two processes logging to one file: when one rotates it, the other
// follows to the new file instead of rotating again.
func TestAnotherWriterRotated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "zen.log")
	a, err := Open(path, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(path, 10, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	write(t, a, "aaaa\n")
	write(t, b, "bbbbbb\n")
	write(t, b, "cccc\n") // b sees 12 bytes on disk and rotates: a's file is now zen.log.1
	write(t, a, "dd\n")   // a counts 8 bytes: it writes on to zen.log.1
	write(t, a, "eeee\n") // a counts itself full, finds b's new file with room, and moves to it
	want := map[string]string{"zen.log": "cccc\neeee\n", "zen.log.1": "aaaa\nbbbbbb\ndd\n"}
	if diff := cmp.Diff(want, contents(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
}

func TestOpen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "state", "zen", "zen.log")
	l, err := Open(path, 1<<20, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700 | os.ModeDir} {
		info, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if info.Mode() != want {
			t.Errorf("%s has mode %v, want %v", p, info.Mode(), want)
		}
	}
	if _, err := Open(path, 0, 2); err == nil {
		t.Error("Open accepted a size of 0")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Write([]byte("late\n")); err == nil {
		t.Error("a write after Close succeeded")
	}
}

// Lines written at once land whole, each in one file.
func TestConcurrentWritesStayWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	l, err := Open(filepath.Join(dir, "zen.log"), 200, 50)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Repeat("x", 19) + "\n"
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 25 {
				_, _ = l.Write([]byte(line))
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	total := 0
	for name, s := range contents(t, dir) {
		if len(s) > 200 || strings.Count(s, line)*len(line) != len(s) {
			t.Errorf("%s holds %d bytes, not whole lines within the limit", name, len(s))
		}
		total += len(s)
	}
	if total != 8*25*len(line) {
		t.Errorf("%d bytes written, want %d", total, 8*25*len(line))
	}
}
