package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestPlannerRevisesAndBranches(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	plan := func(n, total int, next bool, stepText string, extra map[string]any) map[string]any {
		t.Helper()
		args := mergeArgs(map[string]any{"step": stepText, "step_number": n, "total_steps": total, "next_step_required": next}, extra)
		res, got := callTool(t, st.session, "planner", args)
		if res.IsError {
			t.Fatalf("planner step %d: %s", n, text(res))
		}
		return got
	}
	got := plan(1, 5, true, "Scope the migration", nil)
	if got["status"] != "pause_for_deep_thinking" || got["thinking_required"] != true {
		t.Errorf("step 1 of a 5-step plan: %v", got["status"])
	}
	if n := got["planner_status"].(map[string]any)["step_history_length"]; n != float64(1) {
		t.Errorf("step_history_length after one step = %v, want 1", n)
	}
	id := got["continuation_id"].(string)
	with := func(m map[string]any) map[string]any { return mergeArgs(m, map[string]any{"continuation_id": id}) }
	plan(2, 5, true, "Copy the data", with(nil))
	plan(3, 5, true, "Switch reads", with(nil))
	got = plan(4, 5, true, "Copy the data in batches of 1000", with(map[string]any{"is_step_revision": true, "revises_step_number": 2}))
	if got["status"] != "pause_for_planning" || !strings.Contains(got["next_steps"].(string), "Continue with step 5") {
		t.Errorf("step 4: %v %v", got["status"], got["next_steps"])
	}
	// A revision is a step of its own, as the reference keeps it: step 2
	// stays as the agent wrote it, each saying which revised which. An
	// earlier zen put the revision in step 2's place, losing step 4 and
	// counting one step fewer.
	if n := got["planner_status"].(map[string]any)["step_history_length"]; n != float64(4) {
		t.Errorf("step_history_length after a revision at step 4 = %v, want 4", n)
	}
	want := []any{
		map[string]any{"step_number": 1.0, "step": "Scope the migration"},
		map[string]any{"step_number": 2.0, "step": "Copy the data", "revised_by_step": 4.0},
		map[string]any{"step_number": 3.0, "step": "Switch reads"},
		map[string]any{"step_number": 4.0, "step": "Copy the data in batches of 1000", "revises_step_number": 2.0},
	}
	if diff := cmp.Diff(want, got["plan"]); diff != "" {
		t.Errorf("the plan after a revision (-want +got):\n%s", diff)
	}
	got = plan(5, 5, false, "Alternative: dual writes", with(map[string]any{"is_branch_point": true, "branch_from_step": 3, "branch_id": "dual-writes"}))
	if got["status"] != "planning_complete" || got["planning_complete"] != true ||
		got["plan_summary"] != "COMPLETE PLAN: Alternative: dual writes (Total 5 steps completed)" {
		t.Errorf("final: %v", got)
	}
	if b := got["metadata"].(map[string]any)["branches"].([]any); len(b) != 1 || b[0] != "dual-writes" {
		t.Errorf("branches = %v", b)
	}
	// A new plan (step 1, no continuation) starts empty: sessions never share state.
	got = plan(1, 2, true, "Another task", nil)
	if n := got["planner_status"].(map[string]any)["step_history_length"]; n != float64(1) {
		t.Errorf("a new plan starts with %v steps, want 1", n)
	}
	if len(fake.Requests()) != 0 {
		t.Error("the planner called a model")
	}
}

func TestTracerModes(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	base := map[string]any{"step": "Trace Parser.parse", "findings": "starting", "target_description": "how Parser.parse runs"}
	res, got := callTool(t, st.session, "tracer", mergeArgs(base, map[string]any{"step_number": 1, "total_steps": 2, "next_step_required": true, "trace_mode": "ask"}))
	if res.IsError || got["status"] != "mode_selection_required" {
		t.Fatalf("ask: %s", text(res))
	}
	res, got = callTool(t, st.session, "tracer", mergeArgs(base, map[string]any{"step_number": 1, "total_steps": 2, "next_step_required": true, "trace_mode": "precision"}))
	if res.IsError || got["status"] != "pause_for_tracing" || got["tracer_required"] != true {
		t.Fatalf("precision step 1: %s", text(res))
	}
	res, got = callTool(t, st.session, "tracer", mergeArgs(base, map[string]any{"step_number": 2, "total_steps": 2, "next_step_required": false,
		"trace_mode": "precision", "continuation_id": got["continuation_id"]}))
	out, _ := got["output"].(map[string]any)
	if res.IsError || got["status"] != "tracing_complete" || !strings.Contains(out["rendering_instructions"].(string), "↓") {
		t.Fatalf("final: %s", text(res))
	}
	if len(fake.Requests()) != 0 {
		t.Error("the tracer called a model")
	}
}

func TestDocgenCountsFiles(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	res, got := callTool(t, st.session, "docgen", map[string]any{"step": "Find what needs documenting", "step_number": 1, "total_steps": 3,
		"next_step_required": true, "findings": "two files", "document_complexity": true, "document_flow": true, "update_existing": true,
		"comments_on_complex_logic": true, "num_files_documented": 0, "total_files_to_document": 2})
	if res.IsError || got["status"] != "pause_for_documentation_analysis" || !strings.Contains(got["next_steps"].(string), "Discovery only") {
		t.Fatalf("discovery step: %s", text(res))
	}
	args := map[string]any{"step": "Document the parser", "step_number": 2, "total_steps": 3, "next_step_required": false,
		"findings": "documented one", "document_complexity": true, "document_flow": true, "update_existing": true,
		"comments_on_complex_logic": true, "num_files_documented": 1, "total_files_to_document": 2}
	res, got = callTool(t, st.session, "docgen", args)
	if res.IsError || got["status"] != "documentation_analysis_required" || !strings.Contains(got["next_steps"].(string), "CRITICAL") {
		t.Fatalf("finishing early: %s", text(res))
	}
	res, got = callTool(t, st.session, "docgen", mergeArgs(args, map[string]any{"num_files_documented": 2}))
	if res.IsError || got["status"] != "documentation_analysis_complete" {
		t.Fatalf("done: %s", text(res))
	}
}

func TestChallengeAndAPILookupCallNoModel(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	res, got := callTool(t, st.session, "challenge", map[string]any{"prompt": "I think the cache is never invalidated"})
	if res.IsError || got["status"] != "challenge_accepted" || !strings.Contains(got["challenge_prompt"].(string), "the cache is never invalidated") {
		t.Errorf("challenge: %s", text(res))
	}
	res, got = callTool(t, st.session, "apilookup", map[string]any{"prompt": "React 19 use() hook"})
	if res.IsError || got["status"] != "web_lookup_needed" || got["user_prompt"] != "React 19 use() hook" {
		t.Errorf("apilookup: %s", text(res))
	}
	if len(fake.Requests()) != 0 {
		t.Error("a prompt-shaping tool called a model")
	}
}

// TestAWorkflowKeepsTheModelItsFirstStepNamed: a step without an expert's
// answer stored no model, so the final step, naming none, had its expert
// picked by auto mode, not the model the agent chose at step 1, as zen's
// own instructions promise ("a continuation without model keeps its
// thread's model").
func TestAWorkflowKeepsTheModelItsFirstStepNamed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	catalogue := filepath.Join(dir, "custom.json")
	if err := os.WriteFile(catalogue, []byte(`{"models":[{"model_name":"alpha","intelligence_score":18,`+
		`"context_window":128000},{"model_name":"beta","intelligence_score":5,"context_window":128000}]}`),
		0o644); err != nil {
		t.Fatal(err)
	}
	fake := fakemodel.New(t)
	st := serveStack(t, mergeEnv(fakeEnv(fake), map[string]string{"CUSTOM_MODELS_CONFIG_PATH": catalogue}))
	step := map[string]any{"step": "look", "step_number": 1, "total_steps": 2, "next_step_required": true,
		"findings": "the lock is taken twice", "model": "beta"}
	res, got := callTool(t, st.session, "debug", step)
	id, _ := got["continuation_id"].(string)
	if res.IsError || id == "" {
		t.Fatalf("step 1: %v", got)
	}
	res, got = callTool(t, st.session, "debug", map[string]any{"step": "found it", "step_number": 2,
		"total_steps": 2, "next_step_required": false, "findings": "a double lock in Close",
		"hypothesis": "Close locks twice", "confidence": "high", "continuation_id": id})
	if res.IsError {
		t.Fatalf("step 2: %v", got)
	}
	reqs := fake.Requests()
	if len(reqs) != 1 || reqs[0].Model != "beta" {
		var models []string
		for _, r := range reqs {
			models = append(models, r.Model)
		}
		t.Errorf("the expert was asked of %v, want beta, the model step 1 named", models)
	}
}
