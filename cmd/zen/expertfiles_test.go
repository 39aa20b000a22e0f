package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// TestAWorkflowsExpertReadsEveryStepsFiles: the reference's expert reads
// every file the workflow's steps named relevant (its consolidated
// findings), not only the final step's; zen's read the final step's alone,
// so an agent that named its files while investigating and sent a short
// final step had them judged unseen. An earlier step's file that can no
// longer be read is left out, saying so, rather than failing the step.
func TestAWorkflowsExpertReadsEveryStepsFiles(t *testing.T) {
	t.Parallel()
	dir, fake, st := visionStack(t)
	first := writeTestFile(t, dir, "first.py", "FIRST_FILE_BODY = 1\n")
	second := writeTestFile(t, dir, "second.py", "SECOND_FILE_BODY = 2\n")
	gone := writeTestFile(t, dir, "gone.py", "GONE_FILE_BODY = 3\n")
	step := func(n int, next bool, id string, paths ...string) map[string]any {
		args := map[string]any{"step": "look", "step_number": n, "total_steps": 3, "next_step_required": next,
			"findings": "finding", "model": "llava", "analysis_type": "general"}
		if len(paths) > 0 {
			args["relevant_files"] = paths
		}
		if id != "" {
			args["continuation_id"] = id
		}
		res, got := callTool(t, st.session, "analyze", args)
		if res.IsError {
			t.Fatalf("step %d: %s", n, text(res))
		}
		return got
	}
	id, _ := step(1, true, "", first, gone)["continuation_id"].(string)
	step(2, true, id, second, dir+"/./first.py") // first again, under another spelling
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	got := step(3, false, id)
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want the expert's alone", len(reqs))
	}
	body := string(reqs[0].Body)
	for name, marker := range map[string]string{"first": "FIRST_FILE_BODY", "second": "SECOND_FILE_BODY"} {
		if n := strings.Count(body, marker); n != 1 {
			t.Errorf("the expert read the %s step's file %d times, want once", name, n)
		}
	}
	if !strings.Contains(body, "FILE SKIPPED: "+gone) {
		t.Errorf("the expert was not told of the file it could not read")
	}
	if fc, _ := got["file_context"].(map[string]any); fc["files_embedded"] != float64(2) {
		t.Errorf("file_context = %v, want files_embedded 2", fc)
	}
}

// TestAnEarlierFileIsCheckedAsANamedOneIs: the files a final step's
// earlier steps named are the thread's, which a client can write with an
// import: one the file policy refuses (a system directory, a credential
// store) is never read, and the step goes on, the expert told it was left
// out.
func TestAnEarlierFileIsCheckedAsANamedOneIs(t *testing.T) {
	t.Parallel()
	dir, fake, st := visionStack(t)
	system, keys := refusedPlaces(t)
	outside := writeTestFile(t, system, "secret.py", "OUTSIDE_BODY = 1\n")
	key := writeTestFile(t, keys, "config", "KEY_BODY\n")
	code := writeTestFile(t, dir, "lock.py", "LOCK_BODY = 1\n")
	id := uuid.NewString()
	step1, _ := json.Marshal(map[string]any{"thread_id": id, "tool_name": "analyze", "turns": []any{map[string]any{
		"role": "ROLE_USER", "content": "look", "tool_name": "analyze",
		"model_metadata": map[string]any{"step": map[string]any{"step_number": 1,
			"relevant_files": []any{outside, key}}}}}})
	if code, body := request(t, "POST", st.gateway+"/v1/threads:import", "", string(step1)+"\n"); code != 200 {
		t.Fatalf("import: %d %s", code, body)
	}
	res, _ := callTool(t, st.session, "analyze", map[string]any{"step": "found it", "step_number": 2,
		"total_steps": 2, "next_step_required": false, "findings": "done", "model": "llava", "continuation_id": id,
		"relevant_files": []any{code}})
	if res.IsError {
		t.Fatalf("final step: %s", text(res))
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want the expert's alone", len(reqs))
	}
	body := string(reqs[0].Body)
	for name, marker := range map[string]string{"in a system directory": "OUTSIDE_BODY", "in .ssh": "KEY_BODY"} {
		if strings.Contains(body, marker) {
			t.Errorf("the expert was sent a file %s", name)
		}
	}
	if !strings.Contains(body, "FILE SKIPPED: "+outside) || !strings.Contains(body, "FILE SKIPPED: "+key) {
		t.Errorf("the expert was not told the refused files were left out")
	}
}
