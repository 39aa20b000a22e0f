package main

import (
	"strings"
	"testing"
)

// TestThinkdeepsExpertReadsNoFiles: the reference's thinkdeep sends its
// expert no file content (it weighs the agent's reasoning, which names
// the files); zen's embedded the relevant files, at the tokens' cost.
func TestThinkdeepsExpertReadsNoFiles(t *testing.T) {
	t.Parallel()
	dir, fake, st := visionStack(t)
	code := writeTestFile(t, dir, "plan.py", "PLAN_FILE_BODY = 1\n")
	res, got := callTool(t, st.session, "thinkdeep", map[string]any{"step": "weigh the plan", "step_number": 1,
		"total_steps": 1, "next_step_required": false, "findings": "two options", "model": "llava",
		"relevant_files": []any{code}})
	if res.IsError {
		t.Fatalf("thinkdeep: %s", text(res))
	}
	reqs := fake.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls, want the expert's", len(reqs))
	}
	if body := string(reqs[0].Body); strings.Contains(body, "PLAN_FILE_BODY") {
		t.Errorf("thinkdeep's expert was sent the file's content")
	}
	if got["status"] != "calling_expert_analysis" {
		t.Errorf("status = %v", got["status"])
	}
}
