package tools

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/turnmeta"
	"google.golang.org/protobuf/types/known/structpb"
)

// workflowSpec is what makes one workflow tool differ from another; the
// engine (runWorkflow) does the rest the same way for all.
type workflowSpec struct {
	name, title, description string
	// expert: the final step consults the model, unless a skip rule holds;
	// alwaysExpert: even with nothing to show it (thinkdeep's rule).
	expert, alwaysExpert bool
	// embedFiles: the expert reads the relevant files and the thread's
	// files, under filesHeader, with the system prompt inside the user
	// message (the reference's six file-including tools).
	embedFiles  bool
	filesHeader string
	// hypothesisConcludes: a completion without the expert reports the
	// agent's hypothesis as its final_analysis, not its findings (debug).
	hypothesisConcludes bool
	// requireAtStep1 names an argument step 1 must carry.
	requireAtStep1 string
	confidence     []string
	defaultConf    string
	// skip, when true on the final step, completes without the expert
	// with skipStatus and skipReason.
	skip       func(a *workflowArgs) bool
	skipStatus string
	skipReason string
	// Vocabulary (reference table 2.4.2).
	pause, statusKey, requiredKey, completeKey, completionKey string
	// fields are the tool's own arguments; omit drops common ones.
	fields   map[string]*jsonschema.Schema
	required []string
	omit     []string
	// actions are the required actions for a pause at this step.
	actions func(a *workflowArgs) []string
	// considerations is how the agent should weigh the expert's answer.
	considerations string
	// statusExtra adds tool-specific counts to the status block.
	statusExtra func(s *workflowState, a *workflowArgs) map[string]any
	// brief describes the request for the expert (the tool's own fields).
	brief func(a *workflowArgs) string
	// defaultThinking is the expert's thinking mode when none is given.
	defaultThinking string
	// aliases repeat a response key under a second name the reference
	// also uses (thinkdeep's thinking_status beside thinkdeep_status).
	aliases map[string]string
}

func (w workflowSpec) tool() Tool {
	return Tool{
		Name: w.name, Title: w.title, Description: w.description + stepping + expertFinal, Category: ExtendedReasoning,
		ReadOnly:      true,
		RequiresModel: true, Workflow: true, FilesArgument: "relevant_files", FilesOnFinalStep: true,
		Schema: func(c Catalog) *jsonschema.Schema {
			return workflowSchema(c, w.fields, w.required, w.omit, w.confidence, true)
		},
		Output: workflowOutputSchema(),
		Run: func(ctx context.Context, env *Env, c *Call) (*executorv1.ToolResult, error) {
			return runWorkflow(ctx, env, c, w)
		},
	}
}

// runWorkflow takes one step of a workflow tool.
func runWorkflow(ctx context.Context, env *Env, c *Call, w workflowSpec) (*executorv1.ToolResult, error) {
	a := newWorkflowArgs()
	if err := decodeArgs(w.name, c.Args, &a); err != nil {
		return workflowFailure(w.name, a.StepNumber, err.Error()), nil
	}
	a.settle(w.defaultConf)
	if a.StepNumber == 1 && w.requireAtStep1 != "" && a.missing(w.requireAtStep1) {
		return workflowFailure(w.name, a.StepNumber, fmt.Sprintf("Step 1 requires '%s': %s", w.requireAtStep1,
			requirementHint(w.requireAtStep1))), nil
	}
	st := stateFor(w.name, c, a.StepNumber)
	st.record(a.stepArgs)
	if failed := st.unkept(w.name, a.StepNumber); failed != nil {
		return failed, nil
	}
	if c.Progress != nil {
		c.Progress(fmt.Sprintf("%s step %d of %d", w.name, a.StepNumber, a.TotalSteps), 0)
	}
	resp := map[string]any{
		"status": w.name + "_in_progress", "step_number": a.StepNumber, "total_steps": a.TotalSteps,
		"next_step_required": a.NextStepRequired, w.statusKey: statusBlock(st, &a, w),
		"metadata": workflowMeta(w.name, c),
	}
	if a.NextStepRequired {
		resp["status"] = w.pause
		resp[w.requiredKey] = true
		resp["file_context"] = referenceOnly(a.RelevantFiles)
		actions := w.actions(&a)
		resp["required_actions"] = anyList(actions)
		resp["next_steps"] = pauseGuidance(w.name, a.stepArgs, actions)
		return w.result(c, st, resp, a.stepArgs, nil), nil
	}
	resp[w.completeKey] = true
	resp[w.completionKey] = completion(st, w, a.stepArgs)
	switch {
	case w.skip != nil && w.skip(&a):
		resp["status"] = w.skipStatus
		resp["skip_expert_analysis"] = true
		resp["expert_analysis"] = map[string]any{"status": skipCode(w, &a), "reason": w.skipReason}
		resp["next_steps"] = fmt.Sprintf("The %s is complete and no outside analysis is needed (%s). Present the findings "+
			"to the user and proceed with the work they imply.", w.name, w.skipReason)
		return w.result(c, st, resp, a.stepArgs, nil), nil
	case !w.expert || !a.UseAssistant || !w.alwaysExpert && !worthAnExpert(st):
		resp["status"] = "local_work_complete"
		resp["next_steps"] = fmt.Sprintf("Your %s is complete without an outside model. Summarize the findings for the "+
			"user, ordered by importance, with the evidence for each.", w.name)
		return w.result(c, st, resp, a.stepArgs, nil), nil
	}
	return expertStep(ctx, env, c, w, st, &a, resp)
}

// worthAnExpert is the reference's rule: something to show the expert.
func worthAnExpert(st *workflowState) bool {
	return len(st.RelevantFiles) > 0 || len(st.findings()) >= 2 || len(st.Issues) > 0
}

func skipCode(w workflowSpec, a *workflowArgs) string {
	if a.ReviewValidationType == "internal" || a.PrecommitType == "internal" {
		return "skipped_due_to_internal_analysis_type"
	}
	if w.name == "refactor" {
		return "skipped_due_to_complete_refactoring_confidence"
	}
	return "skipped_due_to_certain_confidence"
}

func requirementHint(field string) string {
	switch field {
	case "relevant_files":
		return "list the absolute paths of the files or directories this step is about."
	case "path":
		return "give the absolute path of the repository root whose changes are to be validated."
	}
	return "it is needed to start."
}

// workflowFailure is a workflow error (reply.WorkflowFailure).
func workflowFailure(tool string, step int, msg string) *executorv1.ToolResult {
	return &executorv1.ToolResult{IsError: true, Reply: reply.WorkflowFailure(tool, step, msg).Encode()}
}

// workflowMeta is a step's metadata: the tool, and the model resolved for
// it when there is one (the expert's answer names the model that answered).
func workflowMeta(tool string, c *Call) *reply.Metadata {
	meta := &reply.Metadata{ToolName: tool}
	if c.Model != nil {
		meta.SetModel(c.Model.GetName(), c.Model.GetProvider(), c.ModelRequested)
	}
	return meta
}

func statusBlock(st *workflowState, a *workflowArgs, w workflowSpec) map[string]any {
	b := map[string]any{
		"files_checked": len(st.FilesChecked), "relevant_files": len(st.RelevantFiles),
		"relevant_context": len(st.RelevantContext), "issues_found": len(st.Issues),
		"images_collected": len(st.Images), "current_confidence": st.Confidence,
	}
	if w.statusExtra != nil {
		for k, v := range w.statusExtra(st, a) {
			b[k] = v
		}
	}
	return b
}

func referenceOnly(files []string) map[string]any {
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = filepath.Base(f)
	}
	note := "No files referenced in this step."
	if len(names) > 0 {
		note = "Files referenced in this step: " + strings.Join(names, ", ")
	}
	return map[string]any{"type": "reference_only", "note": note,
		"context_optimization": "Files are named, not sent, until the final step, which embeds them once."}
}

// pauseGuidance tells the agent to do the work before the next call.
func pauseGuidance(tool string, a stepArgs, actions []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "MANDATORY: DO NOT call the %s tool again immediately. You MUST first do this work yourself:\n", tool)
	for i, act := range actions {
		fmt.Fprintf(&b, "%d. %s\n", i+1, act)
	}
	fmt.Fprintf(&b, "Only then call %s again with step_number: %d, describing what you found in findings and "+
		"listing the files you examined and the relevant ones.", tool, a.StepNumber+1)
	return b.String()
}

// completion summarizes the whole investigation for the final response.
func completion(st *workflowState, w workflowSpec, a stepArgs) map[string]any {
	out := map[string]any{
		"initial_request": st.InitialRequest, "steps_taken": len(st.History),
		"files_examined": anyList(st.FilesChecked), "relevant_files": anyList(st.RelevantFiles),
		"relevant_context": anyList(st.RelevantContext), "issues_found": st.Issues,
		"work_summary": workSummary(st, w.name),
	}
	if st.Issues == nil {
		out["issues_found"] = []any{} // a list, never null
	}
	if w.skip != nil {
		// The agent's conclusion, as the reference reads it: debug's
		// hypothesis, every other tool's findings.
		out["final_analysis"] = a.Findings
		if w.hypothesisConcludes {
			out["final_analysis"] = a.Hypothesis
		}
		out["confidence_level"] = a.Confidence
	}
	return out
}

func workSummary(st *workflowState, tool string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %s WORK SUMMARY ===\n", strings.ToUpper(tool))
	fmt.Fprintf(&b, "Steps: %d. Files examined: %d. Relevant files: %d. Issues: %d. Confidence: %s.\n",
		len(st.History), len(st.FilesChecked), len(st.RelevantFiles), len(st.Issues), st.Confidence)
	for _, f := range st.findings() {
		b.WriteString(f + "\n")
	}
	if len(st.RelevantContext) > 0 {
		b.WriteString("Relevant code: " + strings.Join(st.RelevantContext, ", ") + "\n")
	}
	return b.String()
}

// stepResult stores the step (one user turn holding the agent's step, plus
// the expert's answer when there was one) and the state with the last turn.
// The step's turn names the model it was called with, which the next step
// that names none inherits (memory's last model): without an expert's
// answer, nothing else in the thread says which the agent chose.
func stepResult(c *Call, st *workflowState, resp map[string]any, a stepArgs, expert *memoryv1.Turn) *executorv1.ToolResult {
	user := &memoryv1.Turn{Role: memoryv1.Role_ROLE_USER, ToolName: st.Tool, Content: stepTurnText(a), Files: fileRefs(c.Files),
		Images: a.Images, ModelMetadata: stepMeta(a, resp), ModelName: c.Model.GetName()}
	turns := []*memoryv1.Turn{user}
	if expert != nil {
		turns = append(turns, expert)
	}
	turns[len(turns)-1].WorkflowState = st.toStruct()
	return &executorv1.ToolResult{
		Reply: stepReply(resp).Encode(), Turns: turns, OffersContinuation: true, InitialContext: workflowSettings(c.Args),
		Continuation: executorv1.Continuation_CONTINUATION_ID,
	}
}

// stepReply types a step's response: its status and metadata (a
// *reply.Metadata under "metadata"); the rest are the workflow's own keys.
func stepReply(resp map[string]any) *reply.Reply {
	r := &reply.Reply{Fields: maps.Clone(resp)}
	r.Status, _ = resp["status"].(string)
	if meta, ok := resp["metadata"].(*reply.Metadata); ok {
		r.Metadata = *meta
	}
	delete(r.Fields, "status")
	delete(r.Fields, "metadata")
	return r
}

// stepMeta is the step as people inspecting the thread see it (the
// gateway's thread view), in the model_metadata of the step's user turn:
// unlike the workflow state, which only this package reads, its keys are
// a promise to readers outside the executor.
func stepMeta(a stepArgs, resp map[string]any) *structpb.Struct {
	status, _ := resp["status"].(string)
	return turnmeta.PutStep(nil, turnmeta.Step{StepNumber: int32(a.StepNumber), TotalSteps: int32(a.TotalSteps),
		NextStepRequired: a.NextStepRequired, Status: status, Confidence: a.Confidence, Findings: a.Findings,
		RelevantFiles: a.RelevantFiles})
}

func stepTurnText(a stepArgs) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Step %d of %d: %s", a.StepNumber, a.TotalSteps, a.Step)
	if a.Findings != "" {
		b.WriteString("\nFindings: " + a.Findings)
	}
	if a.Hypothesis != "" {
		b.WriteString("\nHypothesis: " + a.Hypothesis)
	}
	if len(a.RelevantFiles) > 0 {
		b.WriteString("\nRelevant files: " + strings.Join(a.RelevantFiles, ", "))
	}
	return b.String()
}

// filesOnce joins the files read for this step and the thread's files,
// each path once (the newest content wins). A file this step named but
// went without (c.Skipped) is not taken from the thread either: the expert
// reads why it is missing, not a version that may be out of date.
func filesOnce(c *Call) []*executorv1.FileContent {
	seen := map[string]bool{}
	for _, s := range c.Skipped {
		seen[s.GetPath()] = true
	}
	var out []*executorv1.FileContent
	for _, f := range slices.Concat(c.Files, c.Conversation.GetFiles()) {
		if !seen[f.GetPath()] {
			seen[f.GetPath()] = true
			out = append(out, f)
		}
	}
	return out
}

// stepKeys are a step's own arguments; the rest are the tool's settings.
var stepKeys = []string{"step", "step_number", "total_steps", "next_step_required", "findings", "files_checked",
	"relevant_files", "relevant_context", "issues_found", "confidence", "hypothesis", "images", "use_assistant_model",
	"is_step_revision", "revises_step_number", "is_branch_point", "branch_from_step", "branch_id", "more_steps_needed",
	"num_files_documented", "current_model_index", "model_responses", "models"}

// workflowSettings is what a new thread keeps of a workflow's first call:
// its settings (review type, repository path, ...), never a step's data,
// which would otherwise leak into later steps.
func workflowSettings(args map[string]any) *structpb.Struct {
	kept := map[string]any{}
	for k, v := range args {
		if !slices.Contains(stepKeys, k) && !slices.Contains(perCallKeys, k) {
			kept[k] = v
		}
	}
	return payload(kept)
}

// result is stepResult with the tool's aliased keys repeated.
func (w workflowSpec) result(c *Call, st *workflowState, resp map[string]any, a stepArgs, expert *memoryv1.Turn) *executorv1.ToolResult {
	for from, to := range w.aliases {
		if v, ok := resp[from]; ok {
			resp[to] = v
		}
	}
	return stepResult(c, st, resp, a, expert)
}
