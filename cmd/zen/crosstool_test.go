package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestOneThreadAcrossTools: chat with two files, then thinkdeep,
// codereview and debug on the same continuation_id. Every request carries
// each file exactly once, the earlier conversation is visible, and the
// thread holds one user and one assistant turn per exchange.
func TestOneThreadAcrossTools(t *testing.T) {
	fake := fakemodel.New(t)
	n := 0
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		n++
		return fakemodel.Reply{Content: fmt.Sprintf("ANSWER-%d", n)}
	})
	st := serveStack(t, fakeEnv(fake))
	dir := t.TempDir()
	f1, f2 := filepath.Join(dir, "store.go"), filepath.Join(dir, "cache.go")
	writeFile(f1, "package store\n\nfunc Put() { /* STORE-BODY */ }\n")
	writeFile(f2, "package store\n\nfunc Evict() { /* CACHE-BODY */ }\n")

	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "CHAT-PROMPT: is this cache safe?", "model": "llama3.2",
		"working_directory_absolute_path": dir, "absolute_file_paths": []any{f1, f2}})
	if res.IsError {
		t.Fatal(text(res))
	}
	id := got["continuation_offer"].(map[string]any)["continuation_id"].(string)
	exchanges := []struct {
		tool string
		args map[string]any
	}{
		{"thinkdeep", step(1, 1, false, map[string]any{"relevant_files": []any{f1}, "findings": "THINK-FINDINGS"})},
		{"codereview", step(1, 1, false, map[string]any{"relevant_files": []any{f1, f2}, "findings": "REVIEW-FINDINGS"})},
		{"debug", step(1, 1, false, map[string]any{"relevant_files": []any{f2}, "findings": "DEBUG-FINDINGS"})},
	}
	for i, ex := range exchanges {
		ex.args["continuation_id"] = id
		res, got := callTool(t, st.session, ex.tool, ex.args)
		if res.IsError || got["status"] != "calling_expert_analysis" || got["continuation_id"] != id {
			t.Fatalf("%s: %s", ex.tool, text(res))
		}
		reqs := fake.Requests()
		sent := reqs[len(reqs)-1].AllText()
		for _, body := range []string{"STORE-BODY", "CACHE-BODY"} {
			if c := strings.Count(sent, body); c != 1 {
				t.Errorf("%s: %s appears %d times in the request, want once", ex.tool, body, c)
			}
		}
		if !strings.Contains(sent, "CHAT-PROMPT") || !strings.Contains(sent, "ANSWER-1") {
			t.Errorf("%s: the expert does not see the chat that started the thread", ex.tool)
		}
		for j := 0; j < i; j++ {
			if !strings.Contains(sent, fmt.Sprintf("ANSWER-%d", j+2)) {
				t.Errorf("%s: the expert does not see %s's answer", ex.tool, exchanges[j].tool)
			}
		}
	}
	code, thread := getJSON(t, st.gateway+"/v1/threads/"+id)
	if code != 200 {
		t.Fatalf("thread: %d %v", code, thread)
	}
	turns := thread["thread"].(map[string]any)["turns"].([]any)
	var shape []string
	for _, tr := range turns {
		m := tr.(map[string]any)
		shape = append(shape, fmt.Sprintf("%v/%v", m["tool_name"], strings.TrimPrefix(m["role"].(string), "ROLE_")))
	}
	want := "chat/USER chat/ASSISTANT thinkdeep/USER thinkdeep/ASSISTANT codereview/USER codereview/ASSISTANT debug/USER debug/ASSISTANT"
	if strings.Join(shape, " ") != want {
		t.Errorf("thread turns:\n got %s\nwant %s", strings.Join(shape, " "), want)
	}
}
