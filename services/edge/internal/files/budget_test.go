package files

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestExpandWithinStopsAtTheBudget: files found by walking a directory are
// taken in walk order while they fit, and the rest are counted as left
// out, from their sizes, before anything is read. Files named outright are
// always taken (the caller refuses them together when they do not fit),
// and their room is kept for them ahead of any directory named before.
func TestExpandWithinStopsAtTheBudget(t *testing.T) {
	t.Parallel()
	dir, other := t.TempDir(), t.TempDir()
	for _, name := range []string{"a.go", "b.go", "c.go", filepath.Join("sub", "d.go")} {
		write(t, filepath.Join(dir, name), strings.Repeat("x", 100))
	}
	huge := filepath.Join(dir, "generated.json")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, MaxFileBytes+1); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	named := filepath.Join(other, "named.txt")
	write(t, named, strings.Repeat("y", 50))
	pol := NewPolicy(Config{Roots: []string{dir, other}})

	tests := []struct {
		name     string
		paths    []string
		maxBytes int64
		want     Expansion
	}{
		{"room for all but the huge file", []string{dir}, 1 << 20, Expansion{
			Paths: []string{filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go"), filepath.Join(dir, "c.go"),
				filepath.Join(dir, "sub", "d.go")},
			Bytes:   400,
			Omitted: Omitted{Files: 1, Bytes: MaxFileBytes + 1},
		}},
		{"the named file's room is kept first", []string{dir, named}, 260, Expansion{
			Paths:   []string{filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go"), named},
			Bytes:   250,
			Omitted: Omitted{Files: 3, Bytes: 200 + MaxFileBytes + 1},
		}},
		{"named files are kept past the budget", []string{named, dir}, 10, Expansion{
			Paths:   []string{named},
			Bytes:   50,
			Omitted: Omitted{Files: 5, Bytes: 400 + MaxFileBytes + 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := pol.ExpandWithin(tt.paths, tt.maxBytes)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ExpandWithin (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExpandWithinCountsPastTheFileCap: past MaxFiles found files are left
// out however small they are, so a tree of empty files costs no memory.
func TestExpandWithinCountsPastTheFileCap(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range MaxFiles + 3 {
		write(t, filepath.Join(dir, fmt.Sprintf("f%05d.go", i)), "")
	}
	got, err := NewPolicy(Config{Roots: []string{dir}}).ExpandWithin([]string{dir}, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Omitted{Files: 3}, got.Omitted); diff != "" || len(got.Paths) != MaxFiles {
		t.Errorf("%d files taken; omitted (-want +got):\n%s", len(got.Paths), diff)
	}
}
