package tools

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/reply"
)

// planner builds a plan one step at a time with no model: steps can revise
// earlier ones and branch into alternatives. A revision is a step of its
// own, as the reference keeps it; the plan says which revised which.
func plannerTool() Tool {
	return Tool{
		Name: "planner", Title: "Plan step by step",
		Description: "Plan a complex task one step at a time, revising steps and branching as you learn; no model " +
			"is called." + stepping,
		Category: ExtendedReasoning, ReadOnly: true, Workflow: true,
		Schema: func(c Catalog) *jsonschema.Schema {
			props := stepFields()
			maps.Copy(props, map[string]*jsonschema.Schema{
				"is_step_revision":    boolean(""),
				"revises_step_number": integer("", 1, maxSteps),
				"is_branch_point":     boolean(""),
				"branch_from_step":    integer("", 1, maxSteps),
				"branch_id":           str("e.g. approach-b"),
				"more_steps_needed":   boolean(""),
				"use_assistant_model": boolean("Ignored."),
				"model":               str("Ignored."),
			})
			return object(props, "step", "step_number", "total_steps", "next_step_required")
		},
		Output: workflowOutputSchema(),
		Run:    runPlanner,
	}
}

func runPlanner(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
	args := plannerArgs{stepArgs: newStep()}
	if err := decodeArgs("planner", c.Args, &args); err != nil {
		return workflowFailure("planner", args.StepNumber, err.Error()), nil
	}
	a := args.stepArgs
	a.settle("")
	st := stateFor("planner", c, a.StepNumber)
	if st.InitialRequest == "" {
		st.InitialRequest = a.Step
	}
	rec := stepRecord{Number: a.StepNumber, Step: a.Step}
	revises := args.RevisesStepNumber
	revised := args.IsStepRevision && revises > 0
	if revised {
		rec.Revises = revises
	}
	branch := args.BranchID
	if args.IsBranchPoint && branch != "" {
		if st.Branches == nil {
			st.Branches = map[string][]int{}
		}
		st.Branches[branch] = append(st.Branches[branch], a.StepNumber)
		rec.Branch = branch
	}
	if i := slices.IndexFunc(st.History, func(r stepRecord) bool { return r.Number == rec.Number && r.Branch == rec.Branch }); i >= 0 {
		st.History[i] = rec
	} else {
		st.History = append(st.History, rec)
	}
	sort.SliceStable(st.History, func(i, j int) bool { return st.History[i].Number < st.History[j].Number })
	if failed := st.unkept("planner", a.StepNumber); failed != nil {
		return failed, nil
	}

	branches := slices.Sorted(maps.Keys(st.Branches))
	resp := map[string]any{
		"step_number": a.StepNumber, "total_steps": a.TotalSteps, "next_step_required": a.NextStepRequired,
		"step_content":   a.Step,
		"planner_status": map[string]any{"step_history_length": len(st.History), "branches": anyList(branches)},
		"plan":           planView(st),
		"metadata": &reply.Metadata{ToolName: "planner", Fields: map[string]any{
			"branches": anyList(branches), "step_history_length": len(st.History),
			"is_step_revision": revised, "revises_step_number": revises, "is_branch_point": rec.Branch != "",
			"branch_from_step": args.BranchFromStep, "branch_id": branch,
			"more_steps_needed": args.MoreStepsNeeded,
		}},
	}
	switch {
	case a.NextStepRequired && a.TotalSteps >= 5 && a.StepNumber <= 3:
		resp["status"] = "pause_for_deep_thinking"
		resp["planner_required"] = true
		resp["thinking_required"] = true
		resp["required_thinking"] = anyList(deepThinking[a.StepNumber-1])
		resp["next_steps"] = fmt.Sprintf("MANDATORY: before step %d, think this through and do not rush: %s. Then call "+
			"planner with step_number: %d.", a.StepNumber+1, strings.Join(deepThinking[a.StepNumber-1], "; "), a.StepNumber+1)
	case a.NextStepRequired:
		resp["status"] = "pause_for_planning"
		resp["planner_required"] = true
		resp["next_steps"] = fmt.Sprintf("Continue with step %d. Approximately %d steps remaining.", a.StepNumber+1,
			max(a.TotalSteps-a.StepNumber, 1))
	default:
		resp["status"] = "planning_complete"
		resp["planner_complete"] = true
		resp["planning_complete"] = true
		resp["plan_summary"] = fmt.Sprintf("COMPLETE PLAN: %s (Total %d steps completed)", a.Step, len(st.History))
		resp["output"] = map[string]any{
			"instructions": "Present the complete plan to the user: each step numbered, in order, with its branches " +
				"shown as alternatives.",
			"format": "step_by_step_planning",
			"presentation_guidelines": map[string]any{
				"structure":  "Numbered steps, each with a short title and what it delivers.",
				"diagrams":   "Plain ASCII diagrams for dependencies or flows, when they help.",
				"style":      "No emojis. No time or cost estimates unless the user asked for them.",
				"next_steps": "End with the first concrete action.",
			},
		}
		resp["next_steps"] = "Planning is complete. Present the plan to the user, then start on its first step."
	}
	return stepResult(c, st, resp, a, nil), nil
}

// deepThinking is what to reflect on before the early steps of a long plan.
var deepThinking = [3][]string{
	{"The full scope and what success means", "The approaches open and their trade-offs", "The constraints and the risks"},
	{"The phases and their order", "The dependencies between them", "The critical path and the resources it needs"},
	{"Whether the plan covers the whole task", "The gaps and how to close them", "How to adapt when a step fails", "The first concrete actions"},
}

// planView is the plan as it now stands: every step, a revised one naming
// the (latest) step that revised it.
func planView(st *workflowState) []any {
	type stepOn struct {
		number int
		branch string
	}
	revisedBy := map[stepOn]int{} // the latest revision of each step
	for _, later := range st.History {
		if later.Revises > 0 && later.Number > later.Revises {
			revisedBy[stepOn{later.Revises, later.Branch}] = later.Number
		}
	}
	out := make([]any, len(st.History))
	for i, r := range st.History {
		step := map[string]any{"step_number": r.Number, "step": r.Step}
		if r.Branch != "" {
			step["branch_id"] = r.Branch
		}
		if r.Revises > 0 {
			step["revises_step_number"] = r.Revises
		}
		if n, ok := revisedBy[stepOn{r.Number, r.Branch}]; ok {
			step["revised_by_step"] = n
		}
		out[i] = step
	}
	return out
}
