package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestChatSavesGeneratedCode(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "Here is the plan.\n<GENERATED-CODE>draft</GENERATED-CODE>\nThen:\n<GENERATED-CODE>\n--- FILE: /p/a.go ---\npackage a\n</GENERATED-CODE>\nDone."}
	})
	env := map[string]string{"OPENAI_API_KEY": "o-key", "OPENAI_BASE_URL": fake.URL(), "LOCALE": "fr-FR"}
	st := serveStack(t, env)
	wd := t.TempDir()
	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "write it", "model": "gpt-5.2", "working_directory_absolute_path": wd})
	if res.IsError {
		t.Fatal(text(res))
	}
	saved, err := os.ReadFile(filepath.Join(wd, "zen_generated.code"))
	if err != nil || string(saved) != "--- FILE: /p/a.go ---\npackage a\n" {
		t.Fatalf("zen_generated.code = %q, %v; want the last block", saved, err)
	}
	content := got["content"].(string)
	if strings.Contains(content, "GENERATED-CODE") || strings.Contains(content, "package a") || !strings.Contains(content, "zen_generated.code") {
		t.Errorf("content should drop the blocks and point at the file:\n%s", content)
	}
	system := fake.Requests()[0].Messages[0].Text()
	if !strings.HasPrefix(system, "Always respond in fr-FR.") || !strings.Contains(system, "<GENERATED-CODE>") {
		t.Errorf("system prompt for a code-generating model:\n%.300s", system)
	}

	// LOCALE reaches workflow experts too.
	code := filepath.Join(wd, "x.go")
	writeFile(code, "package x\n")
	res, _ = callTool(t, st.session, "codereview", step(1, 1, false, map[string]any{"model": "gpt-5.2", "relevant_files": []any{code}}))
	if res.IsError {
		t.Fatal(text(res))
	}
	reqs := fake.Requests()
	if !strings.HasPrefix(reqs[len(reqs)-1].AllText(), "Always respond in fr-FR.") {
		t.Errorf("codereview's expert request does not start with the locale line:\n%.200s", reqs[len(reqs)-1].AllText())
	}
}
