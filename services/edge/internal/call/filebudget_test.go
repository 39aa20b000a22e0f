package call

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
)

// TestAFinalStepSkipsWhatOverflowsOnceRead: sizes decide before reading,
// but text read can cost more (an invalid byte becomes a three-byte
// replacement). A final step then leaves out each file that no longer fits
// and goes on with the next, as ExpandWithin does: a file named outright is
// skipped under the path the call gave, and a file found in a directory is
// counted with the directories' omitted files.
func TestAFinalStepSkipsWhatOverflowsOnceRead(t *testing.T) {
	t.Parallel()
	dir, tree := t.TempDir(), t.TempDir()
	// A small window: about 884 tokens of files, 2917 bytes.
	model := &routerv1.Model{Name: "small", ContextWindow: 8192}
	// n bytes that read as 2n: each invalid byte becomes U+FFFD.
	invalid := func(n int) string { return strings.Repeat("\xffx", n/2) }
	base := time.Now().Add(-time.Hour)
	write := func(path, content string, age time.Duration) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, base, base.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	newest, middle, oldest := filepath.Join(dir, "a.go"), filepath.Join(dir, "b.go"), filepath.Join(dir, "c.go")
	write(newest, invalid(700), 0)            // about 425 tokens read
	write(middle, invalid(1000), time.Minute) // about 607: no longer fits
	write(oldest, "package c\n", 2*time.Minute)
	write(filepath.Join(tree, "d.go"), invalid(1000), 0) // found by the walk; no longer fits
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// The call names the middle file by a path that resolves elsewhere.
	givenMiddle := filepath.Join(dir, "sub", "..", "b.go")
	r := &Runner{files: files.NewPolicy(files.Config{Roots: []string{dir, tree}})}
	set, out := r.readFiles("codereview", model, []string{givenMiddle, oldest, newest, tree}, true)
	if out != nil {
		t.Fatalf("readFiles refused: %+v", out)
	}
	var read []string
	for _, f := range set.read {
		read = append(read, f.Path)
	}
	type result struct {
		Read    []string
		Skipped []files.Skipped
		Omitted files.Omitted
	}
	want := result{
		Read:    []string{newest, oldest},
		Skipped: []files.Skipped{{Path: givenMiddle, Reason: files.ReasonOverBudget}},
		Omitted: files.Omitted{Files: 1, Bytes: 1000},
	}
	got := result{Read: read, Skipped: set.skipped, Omitted: set.omitted}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files of a final step (-want +got):\n%s", diff)
	}
}

// The files a call goes without are listed a few, then counted:
// the model reads a line for each and the agent finds them in the reply's
// metadata, and 18,000 paths made a reply of 9 MB past the client's output
// limit.
func TestSkippedFilesAreListedAFewThenCounted(t *testing.T) {
	t.Parallel()
	var skipped []files.Skipped
	for i := range 500 {
		skipped = append(skipped, files.Skipped{Path: "/work/missing-" + strings.Repeat("x", i%7) + ".go",
			Reason: "not found"})
	}
	got := skippedFiles(skipped)
	last := got[len(got)-1]
	if len(got) != maxSkippedListed || got[0].GetPath() != skipped[0].Path ||
		last.GetPath() != skipped[maxSkippedListed-1].Path || !strings.Contains(last.GetReason(), "450 more") {
		t.Errorf("500 files skipped are listed as %d entries, the last %v; want %d, each by its path, the last "+
			"counting the rest", len(got), last, maxSkippedListed)
	}
	if few := skippedFiles(skipped[:3]); len(few) != 3 {
		t.Errorf("3 files skipped are listed as %d entries", len(few))
	}
}
