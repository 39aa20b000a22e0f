package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestExpertAnswersOfEveryShape(t *testing.T) {
	fake := fakemodel.New(t)
	var reply fakemodel.Reply
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return reply })
	st := serveStack(t, fakeEnv(fake))
	code := filepath.Join(t.TempDir(), "a.go")
	writeFile(code, "package a\n")
	final := step(1, 1, false, map[string]any{"relevant_files": []any{code}})
	cases := []struct {
		name    string
		reply   fakemodel.Reply
		status  string
		isError bool
		check   func(got map[string]any) bool
	}{
		{"plain text", fakemodel.Reply{Content: "Looks fine to me."}, "calling_expert_analysis", false, func(got map[string]any) bool {
			e := got["expert_analysis"].(map[string]any)
			return e["status"] == "analysis_complete" && e["raw_analysis"] == "Looks fine to me." && e["format"] == "text"
		}},
		{"files requested", fakemodel.Reply{Content: `{"status": "files_required_to_continue", "mandatory_instructions": "send b.go", "files_needed": ["b.go"]}`},
			"files_required_to_continue", false, func(got map[string]any) bool {
				return strings.Contains(got["content"].(string), "b.go") && got["next_steps"] == "Provide the requested files and continue the analysis."
			}},
		{"provider fails", fakemodel.Reply{Status: 400, Message: "context length exceeded"}, "error", true, func(got map[string]any) bool {
			return strings.Contains(got["content"].(string), "context length exceeded")
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			reply = c.reply
			res, got := callTool(t, st.session, "debug", final)
			if res.IsError != c.isError || got["status"] != c.status || !c.check(got) {
				t.Errorf("isError %v: %s", res.IsError, text(res))
			}
		})
	}
}

// TestWorkflowSessionsNeverShareState is the upstream's leak, fixed: two
// investigations in separate threads each see only their own steps.
func TestWorkflowSessionsNeverShareState(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "{}"} })
	st := serveStack(t, fakeEnv(fake))
	_, a := callTool(t, st.session, "debug", step(1, 3, true, map[string]any{"findings": "session A clue"}))
	_, b := callTool(t, st.session, "debug", step(1, 3, true, map[string]any{"findings": "session B clue"}))
	callTool(t, st.session, "debug", step(2, 3, true, map[string]any{"continuation_id": a["continuation_id"], "findings": "session A more"}))
	_, done := callTool(t, st.session, "debug", step(3, 3, false, map[string]any{"continuation_id": b["continuation_id"], "findings": "session B end"}))
	summary := done["complete_investigation"].(map[string]any)
	if summary["steps_taken"] != float64(2) {
		t.Errorf("session B took 2 steps, reported %v", summary["steps_taken"])
	}
	sent := fake.Requests()[0].AllText()
	if strings.Contains(sent, "session A") || !strings.Contains(sent, "session B clue") {
		t.Errorf("session B's expert request mixes sessions:\n%.1200s", sent)
	}
}

func TestWorkflowBadInput(t *testing.T) {
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	huge := strings.Repeat("y", 60_001)
	cases := []struct {
		name, tool string
		args       map[string]any
		status     string
		mention    string
	}{
		{"relative relevant file", "debug", step(1, 1, false, map[string]any{"relevant_files": []any{"src/a.go"}}), "debug_failed", "src/a.go"},
		{"relative files_checked", "codereview", step(1, 2, true, map[string]any{"relevant_files": []any{"/tmp/x.go"}, "files_checked": []any{"x.go"}}), "codereview_failed", "x.go"},
		{"relative repository path", "precommit", step(1, 3, true, map[string]any{"path": "repo"}), "precommit_failed", "repo"},
		{"step over the input limit", "thinkdeep", step(1, 1, false, map[string]any{"step": huge}), "resend_prompt", "too long"},
		{"refactor with the common confidence", "refactor", step(1, 2, true, map[string]any{"relevant_files": []any{"/tmp/x.go"}, "confidence": "low"}), "refactor_failed", "confidence"},
		{"unknown field", "analyze", step(1, 2, true, map[string]any{"relevant_files": []any{"/tmp/x.go"}, "backtrack_from_step": 1}), "analyze_failed", "backtrack_from_step"},
		{"step number below one", "debug", step(0, 1, true, nil), "debug_failed", "step_number"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, got := callTool(t, st.session, c.tool, c.args)
			msg, _ := got["error"].(string)
			if content, ok := got["content"].(string); ok {
				msg += content
			}
			if !res.IsError || got["status"] != c.status || !strings.Contains(msg, c.mention) {
				t.Errorf("%.400s", text(res))
			}
		})
	}
	if n := len(fake.Requests()); n != 0 {
		t.Errorf("bad input reached the model %d times", n)
	}
}

func TestThinkdeepThinkingDefault(t *testing.T) {
	gemini := fakemodel.New(t)
	env := map[string]string{"GEMINI_API_KEY": "g-key", "GEMINI_BASE_URL": gemini.GeminiURL(), "DEFAULT_THINKING_MODE_THINKDEEP": "minimal"}
	st := serveStack(t, env)
	budget := func(args map[string]any) int {
		t.Helper()
		res, _ := callTool(t, st.session, "thinkdeep", step(1, 1, false, mergeArgs(map[string]any{"model": "gemini-2.5-pro"}, args)))
		if res.IsError {
			t.Fatal(text(res))
		}
		reqs := gemini.Requests()
		if b := reqs[len(reqs)-1].ThinkingBudget; b != nil {
			return *b
		}
		return -1
	}
	low, high := budget(nil), budget(map[string]any{"thinking_mode": "max"})
	if low < 0 || high <= low {
		t.Errorf("thinking budget with DEFAULT_THINKING_MODE_THINKDEEP=minimal: %d; with thinking_mode max: %d", low, high)
	}
}

// TestInputsTheReferenceTookAreTaken: the reference advertised precommit's
// total_steps minimum of 3 in its schema only, and took fewer (its fast
// track on a continued conversation allows two steps); it took a file list
// sent as one string (and dropped it). zen refused both. A list sent as a
// string is read as the list it names now: a path, or a list in JSON, as
// some clients send an array.
func TestInputsTheReferenceTookAreTaken(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	st := serveStack(t, fakeEnv(fake))
	repo := t.TempDir()
	for _, total := range []int{1, 2} {
		res, got := callTool(t, st.session, "precommit", step(1, total, true, map[string]any{"path": repo}))
		if res.IsError || got["status"] != "pause_for_validation" {
			t.Errorf("precommit with total_steps %d: %.400s", total, text(res))
		}
	}
	a, b := filepath.Join(repo, "a.go"), filepath.Join(repo, "b.go")
	for _, files := range []string{a, `["` + a + `", "` + b + `"]`} {
		res, got := callTool(t, st.session, "codereview", step(1, 2, true, map[string]any{"relevant_files": files,
			"files_checked": files}))
		status, _ := got["code_review_status"].(map[string]any)
		if res.IsError || status == nil {
			t.Errorf("codereview with files %s: %.400s", files, text(res))
			continue
		}
		want := 1.0
		if strings.HasPrefix(files, "[") {
			want = 2
		}
		if status["relevant_files"] != want || status["files_checked"] != want {
			t.Errorf("codereview with files %s: %v; want %v files each", files, status, want)
		}
	}
	// The reference's schema takes any object as an issue: a severity of
	// its own, or none, is an issue still.
	issues := []any{map[string]any{"severity": "info", "description": "a note"},
		map[string]any{"description": "no severity"}, map[string]any{"severity": 3, "description": 7}}
	res, got := callTool(t, st.session, "secaudit", step(1, 2, true, map[string]any{"relevant_files": []any{a},
		"issues_found": issues}))
	if status, _ := got["security_audit_status"].(map[string]any); res.IsError || status["issues_found"] != 3.0 {
		t.Errorf("secaudit with issues of other severities: %.400s", text(res))
	}
}
