package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestFilesAreEmbeddedOnceAndChangesAreNew(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	dir := t.TempDir()
	file := filepath.Join(dir, "calc.go")
	if err := os.WriteFile(file, []byte("package calc // first version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := map[string]any{"prompt": "review this", "working_directory_absolute_path": dir, "model": "llama3.2", "absolute_file_paths": []any{file}}
	_, got := callTool(t, st.session, "chat", args)
	id := got["continuation_offer"].(map[string]any)["continuation_id"].(string)
	if first := fake.Requests()[0].AllText(); strings.Count(first, "first version") != 1 || !strings.Contains(first, "=== CONTEXT FILES ===") {
		t.Fatalf("first request should embed the file once:\n%s", first)
	}

	// Unchanged: the history carries it; the new request does not repeat it.
	args = map[string]any{"prompt": "and again", "working_directory_absolute_path": dir, "continuation_id": id, "absolute_file_paths": []any{file}}
	callTool(t, st.session, "chat", args)
	second := fake.Requests()[1].AllText()
	if strings.Count(second, "first version") != 1 || !strings.Contains(second, "already") {
		t.Errorf("an unchanged file must appear once, in the history, with a note:\n%s", second)
	}

	// Changed on disk: the new version is embedded as a new file.
	if err := os.WriteFile(file, []byte("package calc // second version\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	callTool(t, st.session, "chat", args)
	third := fake.Requests()[2].AllText()
	if !strings.Contains(third, "second version") || !strings.Contains(third, "=== CONTEXT FILES ===") {
		t.Errorf("a changed file must be embedded anew:\n%s", third)
	}
	// ... and only anew (issue 14 item 6): the history says it changed
	// instead of showing the old version as if it were current.
	if strings.Contains(third, "first version") || strings.Count(third, "second version") != 1 ||
		len(noteLines(third, "FILE CHANGED")) != 1 || strings.Contains(third, "as it reads now") {
		t.Errorf("a changed file must appear once, at its current version, with a note in the history:\n%s", third)
	}

	// Gone from disk: the history still has it, from memory.
	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	final := continueChat(t, st, fake, id, "what did the file say?")
	if !strings.Contains(final, "second version") {
		t.Errorf("the history lost a file that left the disk:\n%s", final)
	}
}

// A file with Windows line endings, or bytes that are not UTF-8, is read
// as text with LF and U+FFFD, and its thread keeps it like any other: the
// call offers a continuation, a continued call that names the file again
// finds it already in its history, and one made once the file is gone
// still has its text. Such a file once left its conversation unsaved (the
// edge named it by the hash of the bytes on disk, memory by that of the
// text it stores).
func TestAFileOfAnyLineEndingsOrBytesIsKept(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	cases := []struct{ name, onDisk, text string }{
		{"crlf.go", "package crlf // windows\r\nfunc A() {}\r\n", "package crlf // windows\nfunc A() {}\n"},
		{"cr.txt", "old mac\rline endings\r", "old mac\nline endings\n"},
		{"latin1.md", "caf\xe9 au lait\n", "caf\uFFFD au lait\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			file := filepath.Join(dir, tc.name)
			if err := os.WriteFile(file, []byte(tc.onDisk), 0o644); err != nil {
				t.Fatal(err)
			}
			args := map[string]any{"prompt": "review " + tc.name, "working_directory_absolute_path": dir,
				"model": "llama3.2", "absolute_file_paths": []any{file}}
			res, got := callTool(t, st.session, "chat", args)
			offer, _ := got["continuation_offer"].(map[string]any)
			id, _ := offer["continuation_id"].(string)
			if res.IsError || id == "" {
				t.Fatalf("a call with %s offered no continuation:\n%s", tc.name, text(res))
			}
			args = map[string]any{"prompt": "and again", "working_directory_absolute_path": dir,
				"continuation_id": id, "absolute_file_paths": []any{file}}
			callTool(t, st.session, "chat", args)
			again := fake.Requests()[len(fake.Requests())-1].AllText()
			if !strings.Contains(again, "already") || strings.Contains(again, "=== CONTEXT FILES ===") {
				t.Errorf("the file named again was not known from the history:\n%s", again)
			}
			if err := os.Remove(file); err != nil {
				t.Fatal(err)
			}
			sent := continueChat(t, st, fake, id, "what did it say?")
			if strings.Contains(sent, "\r") {
				t.Errorf("the history holds a CR:\n%q", sent)
			}
			for _, line := range strings.Split(strings.TrimSuffix(tc.text, "\n"), "\n") {
				if !strings.Contains(sent, line) {
					t.Errorf("the continued call's history lacks %s's line %q:\n%s", tc.name, line, sent)
				}
			}
		})
	}
}
