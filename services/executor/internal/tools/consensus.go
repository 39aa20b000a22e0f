package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/executor/internal/prompts"
	"github.com/zenmcp/zen/services/executor/internal/render"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/turnmeta"
	"google.golang.org/grpc/status"
)

// consensus asks several models, one per step, each blind to the others.
func consensusTool() Tool {
	return Tool{
		Name: "consensus", Title: "Consensus from several models",
		Description: "Get several models' verdicts on a proposal, one model per step, each with a stance and blind " +
			"to the others; you then synthesize." + stepping,
		Category: ExtendedReasoning, ReadOnly: true, Workflow: true, FilesArgument: "relevant_files",
		Schema: func(c Catalog) *jsonschema.Schema {
			props := stepFields()
			stance := enum("", "for", "against", "neutral")
			stance.Default = json.RawMessage(`"neutral"`)
			maps.Copy(props, map[string]*jsonschema.Schema{
				"step":     str("Step 1: the proposal every model judges; later: notes on the last answer."),
				"findings": str("Your analysis, then each answer's gist."),
				"models": {Type: "array", MinItems: new(2),
					Description: "In order; each model:stance pair once." + modelHint(c),
					Items: object(map[string]*jsonschema.Schema{
						"model":         str(""),
						"stance":        stance,
						"stance_prompt": str("Replaces the stance's instructions."),
						"temperature":   number(0, 1),
						"thinking_mode": enum("", thinkingModes...),
					}, "model")},
				"relevant_files":      strList("Files every model reads."),
				"images":              strList(""),
				"use_assistant_model": boolean("Ignored."),
				"current_model_index": integer("Internal; leave out.", 0, maxSteps),
				"model_responses":     {Type: "array", Items: bare("object"), Description: "Internal; leave out."},
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
	return " Best available: " + strings.Join(names, ", ") + "."
}

func runConsensus(ctx context.Context, env *Env, c *Call) (*executorv1.ToolResult, error) {
	args := consensusArgs{stepArgs: newStep()}
	if err := decodeArgs("consensus", c.Args, &args); err != nil {
		return workflowFailure("consensus", args.StepNumber, err.Error()), nil
	}
	a := args.stepArgs
	a.settle("")
	st := stateFor("consensus", c, a.StepNumber)
	if a.StepNumber == 1 {
		models, err := consensusModels(args.Models)
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
	if failed := st.unkept("consensus", a.StepNumber); failed != nil {
		return failed, nil
	}
	entry := st.Models[idx]
	name, stance := entry.Model, entry.Stance
	if c.Progress != nil {
		c.Progress(fmt.Sprintf("consensus step %d of %d: consulting %s (%s)", a.StepNumber, total, name, stance), 0)
	}
	answer, turn, err := consult(ctx, env, c, st, entry)
	if err != nil {
		return nil, err
	}
	st.Responses = append(st.Responses, answer)
	st.fitLastVerdict()
	last := a.StepNumber >= total
	resp := map[string]any{
		"status": "model_consulted", "step_number": a.StepNumber, "total_steps": total, "next_step_required": !last,
		"model_consulted": name, "model_stance": stance, "model_response": answer, "current_model_index": idx + 1,
		"accumulated_responses": anyList(st.Responses), "consensus_workflow_status": "consulting_models",
	}
	meta := map[string]any{"workflow_type": "multi_model_consensus", "consultation_step": a.StepNumber}
	if a.StepNumber == 1 {
		resp["status"] = "analysis_and_first_model_consulted"
		resp["consensus_workflow_status"] = "initial_analysis_complete"
		resp["agent_analysis"] = map[string]any{"initial_analysis": a.Step, "findings": a.Findings}
	}
	if last {
		resp["status"] = "consensus_workflow_complete"
		resp["consensus_workflow_status"] = "ready_for_synthesis"
		resp["consensus_complete"] = true
		consulted := anyList(consultations(st.Models))
		resp["complete_consensus"] = map[string]any{"initial_prompt": st.Proposal, "models_consulted": consulted,
			"total_responses": len(st.Responses), "consensus_confidence": "high"}
		resp["next_steps"] = "Every model has answered. Synthesize for the user: where they agree, where they disagree " +
			"and why, your recommendation, the next steps, and the risks."
		meta["models_consulted"], meta["total_models"], meta["consensus_complete"] = consulted, total, true
	} else {
		next := st.Models[idx+1]
		resp["next_steps"] = fmt.Sprintf("Note what %s said in findings, then call consensus with step_number: %d to "+
			"consult %s (%s).", name, a.StepNumber+1, next.Model, next.Stance)
		meta["models_to_consult"], meta["total_consultation_steps"] = anyList(consultations(st.Models)), total
	}
	resp["metadata"] = &reply.Metadata{ToolName: "consensus", Fields: meta}
	out := stepResult(c, st, resp, a, turn)
	out.Continuation = executorv1.Continuation_CONTINUATION_OFFER_KEEP_STATUS
	return out, nil
}

// consultations names each consultation as the reference does,
// model:stance: one model may be asked under two stances.
func consultations(ms []consensusModel) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Model + ":" + m.Stance
	}
	return out
}

// consensusModels checks step 1's list: at least two entries, each
// model:stance pair once.
func consensusModels(list []consensusModel) ([]consensusModel, error) {
	if len(list) < 2 {
		return nil, fmt.Errorf("step 1 needs 'models': at least two entries such as [{\"model\": \"a\", \"stance\": \"for\"}, {\"model\": \"b\", \"stance\": \"against\"}]")
	}
	seen := map[string]bool{}
	var out []consensusModel
	for _, entry := range list {
		name := entry.Model
		if strings.TrimSpace(name) == "" {
			return nil, fmt.Errorf("every entry in 'models' needs a model name")
		}
		entry.Stance = orDefault(entry.Stance, "neutral")
		key := strings.ToLower(name) + ":" + entry.Stance
		if seen[key] {
			return nil, fmt.Errorf("'models' lists %s:%s twice; each model:stance pair may appear once (the same model "+
				"can take different stances)", name, entry.Stance)
		}
		seen[key] = true
		out = append(out, entry)
	}
	return out, nil
}

// consult asks one model for its verdict. The model sees the proposal and
// the files only, never another model's answer. A failure is recorded as
// that model's answer; the workflow goes on.
func consult(ctx context.Context, env *Env, c *Call, st *workflowState, entry consensusModel) (map[string]any,
	*memoryv1.Turn, error) {
	name, stance := entry.Model, entry.Stance
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
	if len(c.Files) > 0 || len(c.Skipped) > 0 {
		user += "\n=== CONTEXT FILES ===\n" + render.Files(c.Files) + render.Skipped(c.Skipped) +
			"=== END CONTEXT FILES ===\n"
	}
	g := generation{model: res.GetModel(), system: stancePrompt(entry, env.Locale), user: user, images: c.Images,
		temperature: defaultTemperature, thinkingMode: "medium", label: stance + " stance"}
	if entry.Temperature != nil {
		g.temperature = *entry.Temperature
	}
	if entry.ThinkingMode != "" {
		g.thinkingMode = entry.ThinkingMode
	}
	done, err := run(ctx, env, c, g)
	if err != nil {
		if stop := aborted(ctx, err); stop != nil {
			return nil, nil, stop
		}
		return failed(status.Convert(err).Message())
	}
	answer := map[string]any{"model": name, "stance": stance, "status": "success", "verdict": done.GetContent(),
		"metadata": map[string]any{"provider": done.GetProvider(), "model_name": done.GetModelName()}}
	turn := &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, ToolName: "consensus", Content: fmt.Sprintf("[%s, %s stance]\n%s", name, stance, done.GetContent()),
		ModelName: done.GetModelName(), ModelProvider: done.GetProvider(),
		ModelMetadata: turnmeta.PutUsage(nil, usageMeta(done))}
	return answer, turn, nil
}

// stancePrompt fills the consensus system prompt with the stance's
// instructions, or the caller's own.
func stancePrompt(entry consensusModel, locale string) string {
	instructions := entry.StancePrompt
	if strings.TrimSpace(instructions) == "" {
		instructions = prompts.Text("consensus_" + entry.Stance)
	}
	return strings.ReplaceAll(prompts.System("consensus", locale), "{stance_prompt}", instructions)
}
