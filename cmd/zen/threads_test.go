package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func do(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json") // the gateway refuses other bodies
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, out
}

// startChat begins a conversation and returns its continuation_id.
func startChat(t *testing.T, st stack, prompt string) string {
	t.Helper()
	_, got := callTool(t, st.session, "chat", map[string]any{"prompt": prompt, "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"})
	offer, _ := got["continuation_offer"].(map[string]any)
	id, _ := offer["continuation_id"].(string)
	if id == "" {
		t.Fatalf("no continuation offered: %v", got)
	}
	return id
}

func TestThreadInspection(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	first := startChat(t, st, "the first conversation")
	second := startChat(t, st, "the second conversation")

	_, list := getJSON(t, st.gateway+"/v1/threads?page_size=1")
	threads := list["threads"].([]any)
	if len(threads) != 1 || threads[0].(map[string]any)["thread_id"] != second || list["next_page_token"] == "" {
		t.Fatalf("first page = %v, want the newest thread and a next token", list)
	}
	if threads[0].(map[string]any)["first_prompt"] != "the second conversation" {
		t.Errorf("summary = %v", threads[0])
	}
	_, list = getJSON(t, st.gateway+"/v1/threads?page_size=1&page_token="+list["next_page_token"].(string))
	if got := list["threads"].([]any); len(got) != 1 || got[0].(map[string]any)["thread_id"] != first {
		t.Errorf("second page = %v", list)
	}
	if code, _ := getJSON(t, st.gateway+"/v1/threads?tool_name=debug"); code != 200 {
		t.Errorf("filter by tool: %d", code)
	}
	if code, body := getJSON(t, st.gateway+"/v1/threads?page_token=nonsense"); code != 400 {
		t.Errorf("bad page token: %d %v", code, body)
	}

	// A branch continues with the parent's history but leaves it alone.
	code, raw := do(t, "POST", st.gateway+"/v1/threads/"+first+":branch", "{}")
	var branched map[string]any
	_ = json.Unmarshal(raw, &branched)
	branch, _ := branched["thread"].(map[string]any)["thread_id"].(string)
	if code != 200 || branched["thread"].(map[string]any)["parent_thread_id"] != first {
		t.Fatalf("branch: %d %s", code, raw)
	}
	res, _ := callTool(t, st.session, "chat", map[string]any{"prompt": "on the branch", "working_directory_absolute_path": t.TempDir(), "continuation_id": branch})
	if res.IsError {
		t.Fatalf("continue the branch: %s", text(res))
	}
	reqs := fake.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(last.AllText(), "the first conversation") || last.Model != "llama3.2" {
		t.Errorf("the branch's model call lacks the parent's history or model: %s", last.AllText())
	}
	_, parent := getJSON(t, st.gateway+"/v1/threads/"+first)
	if n := len(parent["thread"].(map[string]any)["turns"].([]any)); n != 2 {
		t.Errorf("the parent has %d turns after the branch continued, want 2", n)
	}

	code, preview := getJSON(t, st.gateway+"/v1/threads/"+branch+"/history?model=local-llama")
	sel, _ := preview["selection"].(map[string]any)
	if code != 200 || preview["model"] != "llama3.2" || sel["total_turns"] != 4.0 {
		t.Errorf("history preview: %d %v", code, preview)
	}

	code, _ = do(t, "DELETE", st.gateway+"/v1/threads/"+second, "")
	if code != 200 {
		t.Errorf("delete: %d", code)
	}
	if code, _ := getJSON(t, st.gateway+"/v1/threads/"+second); code != 404 {
		t.Errorf("deleted thread still answers %d", code)
	}
}

func TestExportImportMovesConversations(t *testing.T) {
	fake := fakemodel.New(t)
	from := serveStack(t, fakeEnv(fake))
	id := startChat(t, from, "remember the number 4242")
	code, export := do(t, "GET", from.gateway+"/v1/threads:export", "")
	if code != 200 || bytes.Count(export, []byte("\n")) != 1 || !bytes.Contains(export, []byte(id)) {
		t.Fatalf("export: %d %s", code, export)
	}

	other := startChat(t, from, "a conversation to leave behind")
	if code, one := do(t, "GET", from.gateway+"/v1/threads:export?thread_id="+other, ""); code != 200 || bytes.Count(one, []byte("\n")) != 1 || !bytes.Contains(one, []byte(other)) {
		t.Errorf("export one: %d %s", code, one)
	}
	to := serveStack(t, fakeEnv(fake))
	if code, body := do(t, "POST", to.gateway+"/v1/threads:import", "{\"thread_id\": broken\n"); code != 400 || !strings.Contains(string(body), "line 1") {
		t.Errorf("corrupt import: %d %s", code, body)
	}
	if code, body := do(t, "POST", to.gateway+"/v1/threads:import", string(export)); code != 200 || !strings.Contains(string(body), `"imported":1`) {
		t.Fatalf("import: %d %s", code, body)
	}
	if code, body := do(t, "POST", to.gateway+"/v1/threads:import", string(export)); code != 409 {
		t.Errorf("importing twice without replace: %d %s", code, body)
	}
	if code, _ := do(t, "POST", to.gateway+"/v1/threads:import?replace=true", string(export)); code != 200 {
		t.Errorf("import with replace: %d", code)
	}
	res, _ := callTool(t, to.session, "chat", map[string]any{"prompt": "what was the number?", "working_directory_absolute_path": t.TempDir(), "continuation_id": id})
	if res.IsError {
		t.Fatalf("continue an imported thread: %s", text(res))
	}
	reqs := fake.Requests()
	if !strings.Contains(reqs[len(reqs)-1].AllText(), "remember the number 4242") {
		t.Error("the imported history did not reach the model")
	}
}
