package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/storedjson"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestAStepWhoseStateTheThreadCouldNotKeepIsRefused: every tool that keeps
// a state between steps refuses, before it asks any model, a step whose
// state would be past what memory keeps; memory refused it after the
// step's model had run, the answer lost and the thread's state with it.
func TestAStepWhoseStateTheThreadCouldNotKeepIsRefused(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("the lock is taken twice. ", storedjson.MaxWorkflowStateBytes/24)
	final := map[string]any{"step_number": 1, "total_steps": 1, "next_step_required": false, "confidence": "high"}
	with := func(more map[string]any) map[string]any {
		args := map[string]any{}
		for k, v := range final {
			args[k] = v
		}
		for k, v := range more {
			args[k] = v
		}
		return args
	}
	for name, args := range map[string]map[string]any{
		"debug":     with(map[string]any{"step": "look", "findings": long, "hypothesis": "a double lock"}),
		"thinkdeep": with(map[string]any{"step": "think", "findings": long}),
		"consensus": with(map[string]any{"step": "should we?", "findings": long, "total_steps": 2,
			"models": []any{map[string]any{"model": "a"}, map[string]any{"model": "b"}}}),
		"planner": with(map[string]any{"step": long}),
		"tracer":  with(map[string]any{"step": "trace", "findings": long, "trace_mode": "precision"}),
		"docgen": with(map[string]any{"step": "document", "findings": long, "num_files_documented": 0,
			"total_files_to_document": 0}),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			tool, ok := Find(name, nil)
			if !ok {
				t.Fatalf("no %s tool", name)
			}
			router := &fakeRouter{reply: `{"status": "analysis_complete", "summary": "agreed"}`}
			res, err := tool.Run(context.Background(), newEnv(t, router), &Call{Args: args,
				Model: &routerv1.Model{Name: "llama3.2", Provider: "custom"}})
			if err != nil {
				t.Fatal(err)
			}
			if got := string(res.GetReply()); !res.GetIsError() || !strings.Contains(got, "more than the conversation "+
				"keeps") || !strings.Contains(got, "new thread") {
				t.Errorf("IsError %v, %.300s; want it refused, saying why and what to do", res.GetIsError(), got)
			}
			if len(router.got) != 0 {
				t.Errorf("the step asked a model %d times", len(router.got))
			}
		})
	}
}

// TestACompletedInvestigationWithoutIssuesListsNone: issues_found is a
// list, empty when no step found any; it was null.
func TestACompletedInvestigationWithoutIssuesListsNone(t *testing.T) {
	t.Parallel()
	debug, ok := Find("debug", nil)
	if !ok {
		t.Fatal("no debug tool")
	}
	res, err := debug.Run(context.Background(), newEnv(t, &fakeRouter{}), &Call{Args: map[string]any{
		"step": "look", "step_number": 1, "total_steps": 1, "next_step_required": false, "findings": "none",
		"confidence": "high", "use_assistant_model": false}})
	if err != nil || res.GetIsError() {
		t.Fatalf("%v %s", err, res.GetReply())
	}
	var reply struct {
		Complete struct {
			Issues json.RawMessage `json:"issues_found"`
		} `json:"complete_investigation"`
	}
	if err := json.Unmarshal(res.GetReply(), &reply); err != nil {
		t.Fatal(err)
	}
	if got := string(reply.Complete.Issues); got != "[]" {
		t.Errorf("issues_found = %s, want []", got)
	}
}

// TestAStepSentAgainReplacesWhatItFound: a step sent again (a client's
// retry after a timeout) replaces its issues and hypothesis as it replaces
// its findings; they were added twice, and the final report listed each
// issue twice.
func TestAStepSentAgainReplacesWhatItFound(t *testing.T) {
	t.Parallel()
	step := func(n int, issue, hypothesis string) stepArgs {
		return stepArgs{StepNumber: n, Step: "look", Findings: "found", Confidence: "medium", Hypothesis: hypothesis,
			Issues: []map[string]any{{"severity": "high", "description": issue}}}
	}
	st := &workflowState{Tool: "codereview"}
	st.record(step(1, "a race in foo", "a race"))
	st = restoreState("codereview", st.toStruct())
	st.record(step(2, "sql injection in bar", "unescaped input"))
	st = restoreState("codereview", st.toStruct())
	st.record(step(2, "sql injection in bar, twice", "unescaped input, twice"))
	st = restoreState("codereview", st.toStruct())
	got := map[string]any{"issues": st.Issues, "hypotheses": st.Hypotheses}
	want := map[string]any{
		"issues": []any{map[string]any{"severity": "high", "description": "a race in foo"},
			map[string]any{"severity": "high", "description": "sql injection in bar, twice"}},
		"hypotheses": []map[string]any{{"step": 1.0, "hypothesis": "a race", "confidence": "medium"},
			{"step": 2.0, "hypothesis": "unescaped input, twice", "confidence": "medium"}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the state after step 2 sent twice (-want +got):\n%s", diff)
	}
}

// TestConsensusKeepsAStateThatFitsWhateverTheModelsSay: each model's
// answer joins the state, and two long ones took it past what the thread
// keeps once the second model had answered (and been paid for): the step
// was then refused. The state keeps the start of an answer that does not
// fit; the answer itself is the step's, whole, and its turn's.
func TestConsensusKeepsAStateThatFitsWhateverTheModelsSay(t *testing.T) {
	t.Parallel()
	consensus, ok := Find("consensus", nil)
	if !ok {
		t.Fatal("no consensus tool")
	}
	long := strings.Repeat("I agree, and here is why. ", storedjson.MaxWorkflowStateBytes*7/10/26)
	env := newEnv(t, &resolvingRouter{fakeRouter{reply: long}})
	args := func(n int) map[string]any {
		return map[string]any{"step": "should we?", "step_number": n, "total_steps": 2, "next_step_required": n < 2,
			"findings": "we should", "models": []any{map[string]any{"model": "a"}, map[string]any{"model": "b"}}}
	}
	var state *structpb.Struct
	for n := 1; n <= 2; n++ {
		res, err := consensus.Run(context.Background(), env, &Call{Args: args(n), WorkflowState: state})
		if err != nil || res.GetIsError() {
			t.Fatalf("step %d: %v %.300s", n, err, res.GetReply())
		}
		turns := res.GetTurns()
		state = turns[len(turns)-1].GetWorkflowState()
		if why := storedjson.FitsAWorkflowState(state.AsMap()); why != "" {
			t.Fatalf("step %d's state would be refused: %s", n, why)
		}
		var reply struct {
			Response map[string]any `json:"model_response"`
		}
		if err := json.Unmarshal(res.GetReply(), &reply); err != nil {
			t.Fatal(err)
		}
		if reply.Response["verdict"] != long {
			t.Errorf("step %d's answer is not whole: %d bytes", n, len(fmt.Sprint(reply.Response["verdict"])))
		}
	}
}

// resolvingRouter is fakeRouter resolving every model name to itself.
type resolvingRouter struct{ fakeRouter }

func (r *resolvingRouter) ResolveModel(_ context.Context, req *routerv1.ResolveModelRequest) (
	*routerv1.ResolveModelResponse, error) {
	return &routerv1.ResolveModelResponse{Model: &routerv1.Model{Name: req.GetModel(), Provider: "custom",
		ContextWindow: 1 << 20}}, nil
}

// TestAnExpertSeesItsOwnStepsImages: the edge sends a final step the
// images of every turn of its tool in the thread, an earlier session's
// among them; the expert takes those its own steps named.
func TestAnExpertSeesItsOwnStepsImages(t *testing.T) {
	t.Parallel()
	st := &workflowState{Images: []string{"/shots/now.png", "/shots/before.png"}}
	c := &Call{Images: []string{"data:now", "data:before", "data:old", "data:pasted"},
		ImageRefs: []string{"/shots/now.png", "/shots/before.png", "/shots/last-session.png", ""}}
	if diff := cmp.Diff([]string{"data:now", "data:before", "data:pasted"}, st.imagesOf(c)); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	// An edge that names none: every image the call carries.
	c.ImageRefs = nil
	if got := st.imagesOf(c); len(got) != 4 {
		t.Errorf("without refs: %v, want the call's four", got)
	}
}
