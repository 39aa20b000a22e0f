package files

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
			Labels:  map[string]string{named: named},
			Bytes:   250,
			Omitted: Omitted{Files: 3, Bytes: 200 + MaxFileBytes + 1},
		}},
		{"named files are kept past the budget", []string{named, dir}, 10, Expansion{
			Paths:   []string{named},
			Labels:  map[string]string{named: named},
			Bytes:   50,
			Omitted: Omitted{Files: 5, Bytes: 400 + MaxFileBytes + 1},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := pol.ExpandWithin(tt.paths, tt.maxBytes, AllNamed)
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
	got, err := NewPolicy(Config{Roots: []string{dir}}).ExpandWithin([]string{dir}, 1<<20, AllNamed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(Omitted{Files: 3}, got.Omitted); diff != "" || len(got.Paths) != MaxFiles {
		t.Errorf("%d files taken; omitted (-want +got):\n%s", len(got.Paths), diff)
	}
}

// TestExpandWithinSkipsProblemFiles: a file named outright that cannot be
// read, is not a regular file or is over MaxFileBytes is listed with the
// reason, by the path as given, and a walk that meets it does not count it
// again; a path the policy refuses fails the expansion.
func TestExpandWithinSkipsProblemFiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.go")
	write(t, good, "package good")
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, MaxFileBytes+1); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.go")
	pol := NewPolicy(Config{Roots: []string{dir}})
	got, err := pol.ExpandWithin([]string{missing, huge, dir, missing}, 1<<20, AllNamed)
	if err != nil {
		t.Fatal(err)
	}
	want := Expansion{Paths: []string{good}, Bytes: 12, Skipped: []Skipped{
		{Path: missing, Reason: "not found"},
		{Path: huge, Reason: "1000001 bytes, over the 1000000-byte limit for one file"},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExpandWithin (-want +got):\n%s", diff)
	}
	secret := filepath.Join(dir, ".env.local")
	write(t, secret, "KEY=v")
	if _, err := pol.ExpandWithin([]string{missing, secret}, 1<<20, AllNamed); !errors.Is(err, ErrDenied) {
		t.Errorf("a denied path: %v, want ErrDenied", err)
	}
}

// TestExpandWithinNewestFirst: a workflow's final step takes the files it
// names newest first while they fit, skipping (not stopping at) one that
// does not, and walks its directories in the room left.
func TestExpandWithinNewestFirst(t *testing.T) {
	t.Parallel()
	dir, tree := t.TempDir(), t.TempDir()
	base := time.Now().Add(-time.Hour)
	var named []string
	for i, size := range []int{100, 250, 150} { // oldest first
		p := filepath.Join(dir, fmt.Sprintf("f%d.go", i))
		write(t, p, strings.Repeat("x", size))
		if err := os.Chtimes(p, base, base.Add(time.Duration(i)*time.Minute)); err != nil {
			t.Fatal(err)
		}
		named = append(named, p)
	}
	write(t, filepath.Join(tree, "a.go"), strings.Repeat("y", 40))
	write(t, filepath.Join(tree, "b.go"), strings.Repeat("y", 20))
	pol := NewPolicy(Config{Roots: []string{dir, tree}})
	got, err := pol.ExpandWithin(append(slices.Clone(named), tree), 300, NewestFirst)
	if err != nil {
		t.Fatal(err)
	}
	want := Expansion{
		Paths:   []string{named[2], named[0], filepath.Join(tree, "a.go")},
		Labels:  map[string]string{named[2]: named[2], named[0]: named[0]},
		Bytes:   290,
		Omitted: Omitted{Files: 1, Bytes: 20},
		Skipped: []Skipped{{Path: named[1], Reason: ReasonOverBudget}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExpandWithin (-want +got):\n%s", diff)
	}
}

// TestADirectoryWithNothingToReadIsSkippedSayingSo: a directory named in a
// call that holds no file a walk reads (empty, or hidden files and
// dependencies only) added nothing, and neither the model nor the agent
// heard of it; the reference said "NO FILES FOUND". It is a skipped path
// now, saying why.
func TestADirectoryWithNothingToReadIsSkippedSayingSo(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	empty, hidden, full := filepath.Join(dir, "empty"), filepath.Join(dir, "hidden"), filepath.Join(dir, "full")
	must(t, os.Mkdir(empty, 0o755))
	write(t, filepath.Join(hidden, ".cache", "a.go"), "package a")
	write(t, filepath.Join(hidden, "node_modules", "b.js"), "b")
	write(t, filepath.Join(hidden, "photo.bin"), "\x00")
	write(t, filepath.Join(full, "main.go"), "package main")
	got, err := NewPolicy(Config{Roots: []string{dir}}).ExpandWithin([]string{empty, hidden, full}, 1<<20, AllNamed)
	if err != nil {
		t.Fatal(err)
	}
	want := Expansion{Paths: []string{filepath.Join(full, "main.go")}, Bytes: 12, Skipped: []Skipped{
		{Path: empty, Reason: ReasonNothingToRead}, {Path: hidden, Reason: ReasonNothingToRead},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ExpandWithin (-want +got):\n%s", diff)
	}
}

// TestADirectoryIsWalkedOnce: a directory named under several spellings
// was walked once for each, its files found again every time (fifty
// spellings of a directory of 20,000 files: 28 s).
func TestADirectoryIsWalkedOnce(t *testing.T) {
	t.Parallel()
	paths := []namedPath{{path: "/src", label: "/src", dir: true}, {path: "/src/a.go", label: "/src/a.go"},
		{path: "/src", label: "/src/./", dir: true}, {path: "/lib", label: "/lib", dir: true},
		{path: "/src", label: "/src/x/..", dir: true}, {path: "/src/a.go", label: "/src/./a.go"}}
	want := []string{"/src", "/src/a.go", "/lib", "/src/./a.go"}
	var got []string
	for _, p := range distinctDirs(paths) {
		got = append(got, p.label)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("distinctDirs (-want +got):\n%s", diff)
	}
}
