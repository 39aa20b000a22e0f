package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// step builds a workflow step's arguments.
func step(n, total int, next bool, extra map[string]any) map[string]any {
	args := map[string]any{"step": "step text " + strings.Repeat("x", n), "step_number": n, "total_steps": total,
		"next_step_required": next, "findings": "found something at step " + string(rune('0'+n)), "model": "llama3.2"}
	for k, v := range extra {
		args[k] = v
	}
	return args
}

// expertTools are the workflow tools that consult a model on the final
// step, with the pause status, the skip rule and the skip status of each.
var expertTools = []struct {
	name, pause, requiredKey string
	skipArgs                 map[string]any
	skipStatus               string
	needs                    string // argument step 1 requires
	embedsSystem             bool
}{
	{"thinkdeep", "pause_for_thinkdeep", "thinkdeep_required", map[string]any{"confidence": "certain"}, "deep_thinking_complete_ready_for_implementation", "", false},
	{"codereview", "pause_for_code_review", "codereview_required", map[string]any{"review_validation_type": "internal"}, "code_review_complete_ready_for_implementation", "relevant_files", true},
	{"precommit", "pause_for_validation", "precommit_required", map[string]any{"precommit_type": "internal"}, "validation_complete_ready_for_commit", "path", true},
	{"debug", "pause_for_investigation", "investigation_required", map[string]any{"confidence": "certain"}, "certain_confidence_proceed_with_fix", "", false},
	{"secaudit", "pause_for_security_audit", "secaudit_required", map[string]any{"confidence": "certain"}, "security_analysis_complete", "", true},
	{"analyze", "pause_for_analysis", "analyze_required", nil, "", "relevant_files", true},
	{"refactor", "pause_for_refactoring_analysis", "refactor_required", map[string]any{"confidence": "complete"}, "refactoring_analysis_complete_ready_for_implementation", "relevant_files", true},
	{"testgen", "pause_for_test_analysis", "testgen_required", map[string]any{"confidence": "certain"}, "test_generation_complete_ready_for_implementation", "relevant_files", true},
}

func TestWorkflowToolsStatusPaths(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "```json\n{\"status\": \"analysis_complete\", \"summary\": \"the expert agrees\"}\n```"}
	})
	st := serveStack(t, fakeEnv(fake))
	dir := t.TempDir()
	code := filepath.Join(dir, "calc.py")
	writeFile(code, "def add(a, b):\n    return a - b\n")
	for _, tool := range expertTools {
		t.Run(tool.name, func(t *testing.T) {
			base := map[string]any{"relevant_files": []any{code}, "files_checked": []any{code}}
			total := 2
			if tool.name == "precommit" {
				base["path"], total = dir, 3
			}
			before := len(fake.Requests())

			// Step 1 pauses: guidance for the agent, a thread, no model call.
			res, got := callTool(t, st.session, tool.name, step(1, total, true, base))
			if res.IsError || got["status"] != tool.pause || got[tool.requiredKey] != true || got["continuation_id"] == nil {
				t.Fatalf("step 1: %s", text(res))
			}
			if !strings.Contains(got["next_steps"].(string), "MANDATORY") || len(got["required_actions"].([]any)) == 0 {
				t.Errorf("step 1 guidance: %v", got["next_steps"])
			}
			if strings.Contains(text(res), `\\n`) {
				t.Error("guidance holds a literal backslash-n")
			}
			id := got["continuation_id"].(string)
			if tool.name == "precommit" {
				_, again := callTool(t, st.session, "precommit", step(2, total, true, mergeArgs(base, map[string]any{"continuation_id": id})))
				if !strings.Contains(again["next_steps"].(string), "Fast track") {
					t.Errorf("precommit continuing a thread with external validation should offer the fast track: %v", again["next_steps"])
				}
			}
			if n := len(fake.Requests()); n != before {
				t.Fatalf("a pause step called the model (%d requests)", n-before)
			}

			// The final step consults the expert with the file, once, numbered.
			res, got = callTool(t, st.session, tool.name, step(2, total, false, mergeArgs(base, map[string]any{"continuation_id": id})))
			if res.IsError || got["status"] != "calling_expert_analysis" {
				t.Fatalf("final step: %s", text(res))
			}
			reqs := fake.Requests()
			if len(reqs) != before+1 {
				t.Fatalf("the final step made %d model calls, want 1", len(reqs)-before)
			}
			sent := reqs[len(reqs)-1].AllText()
			if strings.Count(sent, "return a - b") != 1 || !strings.Contains(sent, "2│     return a - b") {
				t.Errorf("the expert request should hold calc.py once, with line numbers:\n%s", sent)
			}
			if !strings.Contains(sent, "found something at step 1") || !strings.Contains(sent, "found something at step 2") {
				t.Errorf("the expert request misses the findings of the steps:\n%.1500s", sent)
			}
			hasSystem := reqs[len(reqs)-1].Messages[0].Role == "system"
			if hasSystem == tool.embedsSystem {
				t.Errorf("system message sent = %v; this tool embeds its instructions in the user message: %v", hasSystem, tool.embedsSystem)
			}
			expert, _ := got["expert_analysis"].(map[string]any)
			if expert["summary"] != "the expert agrees" {
				t.Errorf("expert_analysis = %v, want the fenced JSON parsed", got["expert_analysis"])
			}
			if tool.name == "thinkdeep" && (got["thinking_status"] == nil || got["complete_thinking"] == nil || got["thinking_complete"] != true) {
				t.Errorf("thinkdeep's final response lacks the reference's thinking_* keys: %v", got)
			}
			if thinking, _ := got["thinking_status"].(map[string]any); tool.name == "thinkdeep" &&
				(thinking["current_step"] != float64(2) || thinking["total_steps"] != float64(2)) {
				t.Errorf("thinkdeep's thinking_status = %v, want the reference's current_step and total_steps",
					thinking)
			}
			summary, _ := got[completionKey(got)].(map[string]any)
			if summary["steps_taken"] != float64(2) {
				t.Errorf("completion = %v, want 2 steps taken", got)
			}

			// The skip rule completes without a model call.
			if tool.skipArgs != nil {
				res, got = callTool(t, st.session, tool.name, step(1, total, false, mergeArgs(base, tool.skipArgs)))
				if res.IsError || got["status"] != tool.skipStatus || got["skip_expert_analysis"] != true {
					t.Errorf("skip: %s", text(res))
				}
			}
			// use_assistant_model=false: the agent's own work stands.
			res, got = callTool(t, st.session, tool.name, step(1, total, false, mergeArgs(base, map[string]any{"use_assistant_model": false})))
			if res.IsError || got["status"] != "local_work_complete" {
				t.Errorf("use_assistant_model=false: %s", text(res))
			}
			if n := len(fake.Requests()); n != before+1 {
				t.Errorf("skips made %d model calls", n-before-1)
			}

			// Step 1 without its required argument fails before any work.
			if tool.needs != "" {
				args := step(1, total, true, base)
				delete(args, tool.needs)
				res, got = callTool(t, st.session, tool.name, args)
				if !res.IsError || got["status"] != tool.name+"_failed" || !strings.Contains(got["error"].(string), tool.needs) {
					t.Errorf("step 1 without %s: %s", tool.needs, text(res))
				}
			}
		})
	}
}

// completionKey finds the complete_<tool> key of a final response.
func completionKey(got map[string]any) string {
	for k := range got {
		if strings.HasPrefix(k, "complete_") {
			return k
		}
	}
	return ""
}

func mergeArgs(a, b map[string]any) map[string]any { return merged(a, b) }
