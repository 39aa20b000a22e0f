package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestConsensusConsultsEachModelBlind(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		system := r.Messages[0].Text()
		switch {
		case strings.Contains(system, "SUPPORTIVE"):
			return fakemodel.Reply{Content: "VERDICT-FOR: ship it"}
		case strings.Contains(system, "my own rules"):
			return fakemodel.Reply{Status: 400, Message: "this model refuses"}
		}
		return fakemodel.Reply{Content: "VERDICT-AGAINST: too risky"}
	})
	st := serveStack(t, fakeEnv(fake))
	dir := t.TempDir()
	spec := dir + "/spec.md"
	writeFile(spec, "# Proposal\nMove sessions to Redis.\n")
	models := []any{
		map[string]any{"model": "llama3.2", "stance": "for", "temperature": 0.2},
		map[string]any{"model": "llama3.2", "stance": "against", "thinking_mode": "low"},
		map[string]any{"model": "llama3.2", "stance": "neutral", "stance_prompt": "Judge by my own rules."},
	}
	args := map[string]any{"step": "Should we move sessions to Redis?", "step_number": 1, "total_steps": 1, "next_step_required": true,
		"findings": "My view: probably yes.", "models": models, "relevant_files": []any{spec}}
	res, got := callTool(t, st.session, "consensus", args)
	if res.IsError || got["status"] != "analysis_and_first_model_consulted" || got["total_steps"] != float64(3) {
		t.Fatalf("step 1: %s", text(res))
	}
	offer, _ := got["continuation_offer"].(map[string]any)
	id, _ := offer["continuation_id"].(string)
	if id == "" || !strings.Contains(offer["note"].(string), "consensus workflow can continue") {
		t.Fatalf("step 1 offer: %v", got["continuation_offer"])
	}
	first := fake.Requests()[0]
	if first.Temperature == nil || *first.Temperature != 0.2 {
		t.Errorf("the for model's temperature = %v, want its own 0.2", first.Temperature)
	}
	if !strings.Contains(first.AllText(), "Move sessions to Redis.") || !strings.Contains(first.AllText(), "Should we move sessions") {
		t.Errorf("model 1 did not get the proposal and the file:\n%s", first.AllText())
	}
	if strings.Contains(first.AllText(), "My view: probably yes.") {
		t.Error("a model saw the agent's own findings")
	}

	res, got = callTool(t, st.session, "consensus", map[string]any{"step": "Model 1 liked it.", "step_number": 2, "total_steps": 3,
		"next_step_required": true, "findings": "for: ship it", "continuation_id": id, "relevant_files": []any{spec}})
	if res.IsError || got["status"] != "model_consulted" || got["model_stance"] != "against" {
		t.Fatalf("step 2: %s", text(res))
	}
	// The reference names each consultation by model and stance: one
	// model may be asked twice.
	meta, _ := got["metadata"].(map[string]any)
	if diff := cmp.Diff([]any{"llama3.2:for", "llama3.2:against", "llama3.2:neutral"},
		meta["models_to_consult"]); diff != "" {
		t.Errorf("models_to_consult (-want +got):\n%s", diff)
	}
	second := fake.Requests()[1]
	if strings.Contains(second.AllText(), "VERDICT-FOR") || strings.Contains(second.AllText(), "Model 1 liked it") {
		t.Errorf("model 2 saw model 1's verdict or the agent's notes:\n%s", second.AllText())
	}
	if !strings.Contains(second.AllText(), "Should we move sessions") {
		t.Error("model 2 did not get the original proposal")
	}

	res, got = callTool(t, st.session, "consensus", map[string]any{"step": "Notes.", "step_number": 3, "total_steps": 3,
		"next_step_required": false, "findings": "against: risky", "continuation_id": id})
	if res.IsError || got["status"] != "consensus_workflow_complete" || got["consensus_complete"] != true {
		t.Fatalf("step 3: %s", text(res))
	}
	if meta, _ := got["metadata"].(map[string]any); meta["consensus_complete"] != true || meta["total_models"] != 3.0 {
		t.Errorf("the final step's metadata = %v, want consensus_complete and total_models 3", meta)
	}
	failed := got["model_response"].(map[string]any)
	if failed["status"] != "error" || !strings.Contains(failed["error"].(string), "refuses") {
		t.Errorf("a failing model should be recorded, not abort: %v", failed)
	}
	if n := len(got["accumulated_responses"].([]any)); n != 3 {
		t.Errorf("%d accumulated responses, want 3", n)
	}
	complete := got["complete_consensus"].(map[string]any)
	if len(complete["models_consulted"].([]any)) != 3 || !strings.Contains(got["next_steps"].(string), "Synthesize") {
		t.Errorf("final: %v", got)
	}

	// Duplicate model:stance pairs are refused before any model call.
	before := len(fake.Requests())
	dup := mergeArgs(args, map[string]any{"models": []any{map[string]any{"model": "llama3.2", "stance": "for"}, map[string]any{"model": "llama3.2", "stance": "for"}}})
	res, got = callTool(t, st.session, "consensus", dup)
	if !res.IsError || got["status"] != "consensus_failed" || !strings.Contains(got["error"].(string), "twice") {
		t.Errorf("duplicate entries: %s", text(res))
	}
	one := mergeArgs(args, map[string]any{"models": []any{map[string]any{"model": "llama3.2"}}})
	res, got = callTool(t, st.session, "consensus", one)
	if !res.IsError || got["status"] != "consensus_failed" {
		t.Errorf("one model: %s", text(res))
	}
	if n := len(fake.Requests()); n != before {
		t.Errorf("refused calls reached the model %d times", n-before)
	}
}
