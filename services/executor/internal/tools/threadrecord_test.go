package tools

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
)

// TestStepsAndUsageAreRecordedForPeople: each workflow step's user turn
// records the step (number, status, confidence, findings), and the
// expert's answer records what its model call used, as chat's answers
// do: the gateway's thread browser shows both from the stored thread.
func TestStepsAndUsageAreRecordedForPeople(t *testing.T) {
	t.Parallel()
	debug, ok := Find("debug", nil)
	if !ok {
		t.Fatal("no debug tool")
	}
	env := newEnv(t, &fakeRouter{reply: `{"status": "analysis_complete", "summary": "agreed"}`})
	model := &routerv1.Model{Name: "llama3.2", Provider: "custom"}
	step := func(n int, next bool, confidence string) map[string]any {
		return map[string]any{"step": "look", "step_number": n, "total_steps": 2, "next_step_required": next,
			"findings": "found " + confidence, "confidence": confidence}
	}
	first, err := debug.Run(context.Background(), env, &Call{Args: step(1, true, "low"), Model: model})
	if err != nil || first.GetIsError() {
		t.Fatalf("step 1: %v %v", err, first)
	}
	last, err := debug.Run(context.Background(), env, &Call{Args: step(2, false, "high"), Model: model,
		WorkflowState: first.GetTurns()[len(first.GetTurns())-1].GetWorkflowState()})
	if err != nil || last.GetIsError() || len(last.GetTurns()) != 2 {
		t.Fatalf("step 2: %v %v", err, last)
	}
	var got []map[string]any
	for _, turn := range append(first.GetTurns(), last.GetTurns()...) {
		got = append(got, turn.GetModelMetadata().AsMap())
	}
	want := []map[string]any{
		{"step": map[string]any{"step_number": 1.0, "total_steps": 2.0, "next_step_required": true,
			"status": "pause_for_investigation", "confidence": "low", "findings": "found low"}},
		{"step": map[string]any{"step_number": 2.0, "total_steps": 2.0, "next_step_required": false,
			"status": "calling_expert_analysis", "confidence": "high", "findings": "found high"}},
		{"usage": map[string]any{"input_tokens": 10.0, "output_tokens": 2.0, "total_tokens": 12.0}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the turns' model_metadata (-want +got):\n%s", diff)
	}
}
