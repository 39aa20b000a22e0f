package tools

import (
	"context"
	"fmt"
	"maps"
	"strings"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/executor/internal/prompts"
	"github.com/zenmcp/zen/services/executor/internal/render"
	"google.golang.org/grpc/status"
)

// consensus asks several models, one per step, each blind to the others.
func consensusTool() Tool {
	return Tool{
		Name: "consensus", Title: "Consensus from several models",
		Description: "Ask several models for their verdict on a proposal, one model per step, each with a stance " +
			"(for, against, neutral or your own instructions); none sees another's answer. You then synthesize.",
		Category: ExtendedReasoning, ReadOnly: true, Workflow: true, FilesArgument: "relevant_files",
		Schema: func(c Catalog) map[string]any {
			props := stepFields()
			maps.Copy(props, map[string]any{
				"step": str("Step 1: the proposal or question every model will judge, with its context. Later " +
					"steps: your notes on the last model's answer."),
				"findings": str("Your own analysis (step 1), then a summary of each model's answer."),
				"models": map[string]any{"type": "array", "minItems": 2,
					"description": "The models to consult, in order, each with a stance; each model:stance pair at most once. " +
						modelHint(c),
					"items": map[string]any{"type": "object", "additionalProperties": false, "required": []any{"model"},
						"properties": map[string]any{
							"model":         str("A model name or alias."),
							"stance":        map[string]any{"type": "string", "enum": []any{"for", "against", "neutral"}, "default": "neutral"},
							"stance_prompt": str("Your own instructions for this model, replacing the stance's."),
							"temperature":   map[string]any{"type": "number", "minimum": 0, "maximum": 1},
							"thinking_mode": map[string]any{"type": "string", "enum": thinkingModes},
						}}},
				"relevant_files":      strList("Absolute paths of files every model should read."),
				"images":              strList("Absolute paths of images, or data:image URLs."),
				"continuation_id":     str("The continuation_id of an earlier answer, to continue that thread."),
				"use_assistant_model": boolean("Accepted for compatibility; every step consults a model."),
				"current_model_index": integer("Managed by zen; leave it out.", 0, maxSteps),
				"model_responses":     map[string]any{"type": "array", "items": map[string]any{"type": "object"}, "description": "Managed by zen; leave it out."},
			})
			return object(props, "step", "step_number", "total_steps", "next_step_required", "findings")
		},
		Output: workflowOutputSchema(),
		Run:    runConsensus,
	}
}

// modelHint names the best models for the models field's description.
func modelHint(c Catalog) string {
	var names []string
	for _, m := range c.Ranked[:min(5, len(c.Ranked))] {
		names = append(names, m.GetName())
	}
	if len(names) == 0 {
		return ""
	}
	return "Best available: " + strings.Join(names, ", ") + "."
}

func runConsensus(ctx context.Context, env *Env, c *Call) (*executorv1.ToolResult, error) {
	a := readStep(c.Args, "")
	st := stateFor("consensus", c, a.StepNumber)
	if a.StepNumber == 1 {
		models, err := consensusModels(c.Args["models"])
		if err != nil {
			return workflowFailure("consensus", 1, err.Error()), nil
		}
		st.InitialRequest, st.Proposal, st.Models = a.Step, a.Step, models
	}
	if len(st.Models) == 0 {
		return workflowFailure("consensus", a.StepNumber, "This thread has no consensus under way: start with step_number 1 and the models to consult."), nil
	}
	total := len(st.Models)
	idx := a.StepNumber - 1
	if idx >= total {
		return workflowFailure("consensus", a.StepNumber, fmt.Sprintf("Every model has been consulted (%d). Synthesize their answers; "+
			"for another round start again at step_number 1.", total)), nil
	}
	st.record(stepArgs{StepNumber: a.StepNumber, Step: a.Step, Findings: a.Findings, RelevantFiles: a.RelevantFiles, Images: a.Images})
	entry := st.Models[idx]
	name, stance := entry["model"].(string), entry["stance"].(string)
	if c.Progress != nil {
		c.Progress(fmt.Sprintf("consensus step %d of %d: consulting %s (%s)", a.StepNumber, total, name, stance), 0)
	}
	answer, turn, err := consult(ctx, env, c, st, entry)
	if err != nil {
		return nil, err
	}
	st.Responses = append(st.Responses, answer)
	last := a.StepNumber >= total
	resp := map[string]any{
		"status": "model_consulted", "step_number": a.StepNumber, "total_steps": total, "next_step_required": !last,
		"model_consulted": name, "model_stance": stance, "model_response": answer, "current_model_index": idx + 1,
		"accumulated_responses": anyList(st.Responses), "consensus_workflow_status": "consulting_models",
	}
	meta := map[string]any{"tool_name": "consensus", "workflow_type": "multi_model_consensus", "consultation_step": a.StepNumber}
	if a.StepNumber == 1 {
		resp["status"] = "analysis_and_first_model_consulted"
		resp["consensus_workflow_status"] = "initial_analysis_complete"
		resp["agent_analysis"] = map[string]any{"initial_analysis": a.Step, "findings": a.Findings}
	}
	if last {
		resp["status"] = "consensus_workflow_complete"
		resp["consensus_workflow_status"] = "ready_for_synthesis"
		resp["consensus_complete"] = true
		var consulted []any
		for _, m := range st.Models {
			consulted = append(consulted, fmt.Sprintf("%s:%s", m["model"], m["stance"]))
		}
		resp["complete_consensus"] = map[string]any{"initial_prompt": st.Proposal, "models_consulted": consulted,
			"total_responses": len(st.Responses), "consensus_confidence": "high"}
		resp["next_steps"] = "Every model has answered. Synthesize for the user: where they agree, where they disagree " +
			"and why, your recommendation, the next steps, and the risks."
		meta["models_consulted"], meta["total_models"] = consulted, total
	} else {
		next := st.Models[idx+1]
		resp["next_steps"] = fmt.Sprintf("Note what %s said in findings, then call consensus with step_number: %d to "+
			"consult %s (%s).", name, a.StepNumber+1, next["model"], next["stance"])
		meta["models_to_consult"], meta["total_consultation_steps"] = anyList(modelNames(st.Models)), total
	}
	resp["metadata"] = meta
	out := stepResult(c, st, resp, a, turn)
	out.Continuation = executorv1.Continuation_CONTINUATION_OFFER_KEEP_STATUS
	return out, nil
}

func modelNames(ms []map[string]any) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = fmt.Sprint(m["model"])
	}
	return out
}

// consensusModels checks step 1's list: at least two entries, each
// model:stance pair once.
func consensusModels(v any) ([]map[string]any, error) {
	list, _ := v.([]any)
	if len(list) < 2 {
		return nil, fmt.Errorf("step 1 needs 'models': at least two entries such as [{\"model\": \"a\", \"stance\": \"for\"}, {\"model\": \"b\", \"stance\": \"against\"}]")
	}
	seen := map[string]bool{}
	var out []map[string]any
	for _, item := range list {
		m, _ := item.(map[string]any)
		name, _ := m["model"].(string)
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("every entry in 'models' needs a model name")
		}
		entry := maps.Clone(m)
		if s, _ := entry["stance"].(string); s == "" {
			entry["stance"] = "neutral"
		}
		key := strings.ToLower(name) + ":" + entry["stance"].(string)
		if seen[key] {
			return nil, fmt.Errorf("'models' lists %s:%s twice; each model:stance pair may appear once (the same model can take different stances)", name, entry["stance"])
		}
		seen[key] = true
		out = append(out, entry)
	}
	return out, nil
}

// consult asks one model for its verdict. The model sees the proposal and
// the files only, never another model's answer. A failure is recorded as
// that model's answer; the workflow goes on.
func consult(ctx context.Context, env *Env, c *Call, st *workflowState, entry map[string]any) (map[string]any, *memoryv1.Turn, error) {
	name, stance := entry["model"].(string), entry["stance"].(string)
	failed := func(msg string) (map[string]any, *memoryv1.Turn, error) {
		return map[string]any{"model": name, "stance": stance, "status": "error", "error": msg}, nil, nil
	}
	res, err := env.Router.ResolveModel(ctx, &routerv1.ResolveModelRequest{Model: name, Category: ExtendedReasoning})
	if err != nil {
		if stop := aborted(ctx, err); stop != nil {
			return nil, nil, stop
		}
		return failed(fmt.Sprintf("model %s is not available: %s", name, status.Convert(err).Message()))
	}
	user := "=== PROPOSAL ===\n" + st.Proposal + "\n=== END PROPOSAL ===\n"
	if len(c.Files) > 0 {
		user += "\n=== CONTEXT FILES ===\n" + render.Files(c.Files) + "=== END CONTEXT FILES ===\n"
	}
	g := generation{model: res.GetModel(), system: stancePrompt(entry, env.Locale), user: user, images: c.Images,
		temperature: defaultTemperature, thinkingMode: "medium", label: stance + " stance"}
	if t, ok := entry["temperature"].(float64); ok {
		g.temperature = t
	}
	if m, ok := entry["thinking_mode"].(string); ok {
		g.thinkingMode = m
	}
	done, err := run(ctx, env, c.Progress, g)
	if err != nil {
		if stop := aborted(ctx, err); stop != nil {
			return nil, nil, stop
		}
		return failed(status.Convert(err).Message())
	}
	answer := map[string]any{"model": name, "stance": stance, "status": "success", "verdict": done.GetContent(),
		"metadata": map[string]any{"provider": done.GetProvider(), "model_name": done.GetModelName()}}
	turn := &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, ToolName: "consensus", Content: fmt.Sprintf("[%s, %s stance]\n%s", name, stance, done.GetContent()),
		ModelName: done.GetModelName(), ModelProvider: done.GetProvider()}
	return answer, turn, nil
}

// stancePrompt fills the consensus system prompt with the stance's
// instructions, or the caller's own.
func stancePrompt(entry map[string]any, locale string) string {
	instructions, _ := entry["stance_prompt"].(string)
	if strings.TrimSpace(instructions) == "" {
		instructions = prompts.Text("consensus_" + entry["stance"].(string))
	}
	return strings.ReplaceAll(prompts.System("consensus", locale), "{stance_prompt}", instructions)
}
