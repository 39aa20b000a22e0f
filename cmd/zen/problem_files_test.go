package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// skippedFile is one entry of a reply's metadata.files_skipped.
type skippedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// filesSkipped reads metadata.files_skipped from a decoded reply.
func filesSkipped(t *testing.T, got map[string]any) []skippedFile {
	t.Helper()
	meta, _ := got["metadata"].(map[string]any)
	raw, err := json.Marshal(meta["files_skipped"])
	if err != nil {
		t.Fatal(err)
	}
	var out []skippedFile
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("files_skipped %s: %v", raw, err)
	}
	return out
}

// noteLines are the lines of a prompt that name path.
func noteLines(prompt, path string) []string {
	var out []string
	for _, line := range strings.Split(prompt, "\n") {
		if strings.Contains(line, path) {
			out = append(out, line)
		}
	}
	return out
}

// TestProblemFilesAreSkippedWithANote is issue 14 item 5 for a simple
// tool: a missing, unreadable, over-1 MB or irregular file no longer fails
// the call. The model reads the good file and one line for each file left
// out; the reply lists them with the reason. A path the security policy
// refuses still fails the call, before any model is asked.
func TestProblemFilesAreSkippedWithANote(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.go")
	if err := writeFile(good, "package good // GOOD-CODE\n"); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.go")
	huge := filepath.Join(dir, "huge.json")
	if err := writeFile(huge, ""); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1_000_001); err != nil { // sparse: nothing is written
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "pipe.txt")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A link that leads back to itself cannot be resolved: unreadable, as
	// a file without read permission is (these tests may run as root).
	loop := filepath.Join(dir, "loop.go")
	if err := os.Symlink(loop, loop); err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))

	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "review these", "model": "llama3.2",
		"working_directory_absolute_path": dir, "absolute_file_paths": []any{missing, good, huge, fifo, loop}})
	if res.IsError {
		t.Fatalf("problem files failed the call: %s", text(res))
	}
	want := []skippedFile{
		{missing, "not found"},
		{huge, "1000001 bytes, over the 1000000-byte limit for one file"},
		{fifo, "not a regular file"},
		{loop, "cannot be read: too many links"},
	}
	if diff := cmp.Diff(want, filesSkipped(t, got)); diff != "" {
		t.Errorf("metadata.files_skipped (-want +got):\n%s", diff)
	}
	prompt := fake.Requests()[0].AllText()
	if !strings.Contains(prompt, "GOOD-CODE") {
		t.Errorf("the readable file did not reach the model:\n%s", prompt)
	}
	for _, s := range want {
		if lines := noteLines(prompt, s.Path); len(lines) != 1 || !strings.Contains(lines[0], s.Reason) {
			t.Errorf("the model should read one line for %s saying %q, got %q", s.Path, s.Reason, lines)
		}
	}

	// The security policy is not a problem file: its refusals still end
	// the call, however many files are fine.
	secret := filepath.Join(dir, ".env")
	if err := writeFile(secret, "API_KEY=SECRET-VALUE\n"); err != nil {
		t.Fatal(err)
	}
	res, _ = callTool(t, st.session, "chat", map[string]any{"prompt": "review these", "model": "llama3.2",
		"working_directory_absolute_path": dir, "absolute_file_paths": []any{missing, good, secret}})
	if !res.IsError || !strings.Contains(text(res), "is a .env file, which holds secrets") {
		t.Errorf("a denied path must still fail the call: IsError %v, %s", res.IsError, text(res))
	}
	if n := len(fake.Requests()); n != 1 {
		t.Errorf("the refused call reached the model (%d requests)", n)
	}
}

// TestFinalStepEmbedsNewestFilesWithinTheBudget is issue 14 item 5 for a
// workflow: a final step whose files pass the model's file budget is no
// longer refused (code_too_large). Its files are taken newest first while
// they fit; the model reads a line for each one left out, and the reply
// lists them.
func TestFinalStepEmbedsNewestFilesWithinTheBudget(t *testing.T) {
	dir := t.TempDir()
	catalogue := filepath.Join(dir, "custom.json")
	if err := writeFile(catalogue,
		`{"models":[{"model_name":"tiny","context_window":10000,"max_output_tokens":2000}]}`); err != nil {
		t.Fatal(err)
	}
	// A 10K context lets one call's files take 1,080 tokens: about 3,500
	// bytes. Named oldest first, old and mid would fit together and new
	// not; newest first, new fits, mid does not, and old still does.
	base := time.Now().Add(-time.Hour)
	var paths []any
	for i, f := range []struct{ name, marker string }{
		{"old.go", "OLD-CODE"}, {"mid.go", "MID-CODE"}, {"new.go", "NEW-CODE"},
	} {
		size := []int{1000, 2500, 1500}[i]
		p := filepath.Join(dir, f.name)
		body := "// " + f.marker + "\n" + strings.Repeat("x", size-len(f.marker)-4) + "\n"
		if err := writeFile(p, body); err != nil {
			t.Fatal(err)
		}
		modified := base.Add(time.Duration(i) * time.Minute)
		if err := os.Chtimes(p, modified, modified); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	fake := fakemodel.New(t)
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"CUSTOM_MODELS_CONFIG_PATH": catalogue}))

	res, got := callTool(t, st.session, "codereview", step(1, 1, false, map[string]any{"model": "tiny",
		"relevant_files": paths}))
	if res.IsError || got["status"] != "calling_expert_analysis" {
		t.Fatalf("the final step: IsError %v, %s", res.IsError, text(res))
	}
	mid := paths[1].(string)
	skipped := filesSkipped(t, got)
	if len(skipped) != 1 || skipped[0].Path != mid || !strings.Contains(skipped[0].Reason, "file budget") {
		t.Errorf("metadata.files_skipped = %+v, want mid.go left out for the file budget", skipped)
	}
	prompt := fake.Requests()[0].AllText()
	if !strings.Contains(prompt, "NEW-CODE") || !strings.Contains(prompt, "OLD-CODE") ||
		strings.Contains(prompt, "MID-CODE") {
		t.Errorf("the expert should read new.go and old.go, not mid.go:\n%.3000s", prompt)
	}
	if lines := noteLines(prompt, mid); len(lines) != 1 || !strings.Contains(lines[0], "file budget") {
		t.Errorf("the expert should read one line saying mid.go was left out, got %q", lines)
	}
	if strings.Index(prompt, "NEW-CODE") > strings.Index(prompt, "OLD-CODE") {
		t.Error("the newest file should come first")
	}
}
