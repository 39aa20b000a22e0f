package tools

import (
	"context"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/reply"
)

// tracer and docgen are workflows the agent does alone: zen keeps the
// state and says what to do next; no model is called.

func tracerTool() Tool {
	return Tool{
		Name: "tracer", Title: "Trace code",
		Description: "Trace a method's call flow (precision) or a class's dependencies (dependencies; ask: the " +
			"user picks); no model is called." + stepping,
		Category: ExtendedReasoning, ReadOnly: true, Workflow: true,
		Schema: func(c Catalog) *jsonschema.Schema {
			return workflowSchema(c, map[string]*jsonschema.Schema{
				"target_description": str("What to trace, and the question."),
				"trace_mode":         enum("", "precision", "dependencies", "ask"),
				"model":              str("Ignored."),
			}, []string{"target_description", "trace_mode"}, []string{"issues_found", "hypothesis", "use_assistant_model"},
				defaultConfidences, false)
		},
		Output: workflowOutputSchema(),
		Run:    runTracer,
	}
}

func runTracer(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
	args := tracerArgs{stepArgs: newStep()}
	if err := decodeArgs("tracer", c.Args, &args); err != nil {
		return workflowFailure("tracer", args.StepNumber, err.Error()), nil
	}
	a := args.stepArgs
	a.settle("exploring")
	mode := orDefault(args.TraceMode, "ask")
	if a.StepNumber == 1 && mode == "ask" {
		return &executorv1.ToolResult{Reply: stepReply(map[string]any{
			"status": "mode_selection_required", "step_number": 1, "total_steps": a.TotalSteps, "next_step_required": true,
			"mode_options": map[string]any{
				"precision":    "Follow the execution of one method or function: what it calls, in order, with branches and side effects.",
				"dependencies": "Map how a class or module connects: what depends on it and what it depends on.",
			},
			"next_steps": "Ask the user which trace mode they want (precision or dependencies), then call tracer again " +
				"with step_number: 1 and that trace_mode.",
			"metadata": &reply.Metadata{ToolName: "tracer", Fields: map[string]any{"trace_mode": "ask"}},
		}).Encode()}, nil
	}
	st := stateFor("tracer", c, a.StepNumber)
	st.TraceMode = mode
	st.record(a)
	if failed := st.unkept("tracer", a.StepNumber); failed != nil {
		return failed, nil
	}
	resp := map[string]any{
		"step_number": a.StepNumber, "total_steps": a.TotalSteps, "next_step_required": a.NextStepRequired,
		"tracer_status": map[string]any{"files_checked": len(st.FilesChecked), "relevant_files": len(st.RelevantFiles),
			"relevant_context": len(st.RelevantContext), "current_confidence": st.Confidence, "trace_mode": mode},
		"trace_config": map[string]any{"trace_mode": mode, "target_description": args.TargetDescription},
		"metadata":     &reply.Metadata{ToolName: "tracer", Fields: map[string]any{"trace_mode": mode}},
	}
	if a.NextStepRequired {
		actions := traceActions[mode]
		resp["status"] = "pause_for_tracing"
		resp["tracer_required"] = true
		resp["required_actions"] = anyList(actions)
		resp["next_steps"] = pauseGuidance("tracer", a, actions)
		return stepResult(c, st, resp, a, nil), nil
	}
	resp["status"] = "tracing_complete"
	resp["tracer_complete"] = true
	resp["tracing_complete"] = true
	resp["trace_summary"] = workSummary(st, "tracer")
	resp["output"] = map[string]any{"rendering_instructions": traceRendering[mode], "format": mode + "_trace"}
	resp["next_steps"] = "Tracing is complete. Present the trace to the user following the rendering instructions."
	return stepResult(c, st, resp, a, nil), nil
}

var traceActions = map[string][]string{
	"precision": {"Find the entry point and read it in full", "Follow each call in order, noting branches and their conditions",
		"Note side effects: writes, network, state changes", "Record file and line for every hop"},
	"dependencies": {"Find every place that uses the target", "List what the target itself uses",
		"Note the kind of each link: call, inheritance, import, data", "Record file and line for every link"},
}

var traceRendering = map[string]string{
	"precision": "Draw the call flow top to bottom: one line per call as [file:line] Class.method(), ↓ between " +
		"sequential calls and → for a call made from inside another; mark branches with their condition. Then a " +
		"table of the branches (condition, where it goes), a list of side effects, the places that call the entry " +
		"point, and the entry points themselves.",
	"dependencies": "Draw the target in the middle: what depends on it above (←) and what it depends on below (→), " +
		"each with file and line. Then list the links by kind (calls, inheritance, imports, shared data) and note any " +
		"cycle.",
}

func docgenTool() Tool {
	return Tool{
		Name: "docgen", Title: "Generate documentation",
		Description: "Document code: step 1 counts the files needing it, then one file per step, counted so none " +
			"is skipped; no model is called." + stepping,
		Category: ExtendedReasoning, ReadOnly: true, Workflow: true,
		Schema: func(c Catalog) *jsonschema.Schema {
			return workflowSchema(c, map[string]*jsonschema.Schema{
				"document_complexity":       on("Big O."),
				"document_flow":             on(""),
				"update_existing":           on(""),
				"comments_on_complex_logic": on(""),
				"num_files_documented":      integer("", 0, maxFiles),
				"total_files_to_document":   integer("", 0, maxFiles),
			}, []string{"document_complexity", "document_flow", "update_existing", "comments_on_complex_logic",
				"num_files_documented", "total_files_to_document"}, []string{"hypothesis", "use_assistant_model", "images"},
				defaultConfidences, false)
		},
		Output: workflowOutputSchema(),
		Run:    runDocgen,
	}
}

func runDocgen(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
	args := docgenArgs{stepArgs: newStep(), DocumentComplexity: true, DocumentFlow: true, UpdateExisting: true,
		CommentsOnComplexLogic: true}
	if err := decodeArgs("docgen", c.Args, &args); err != nil {
		return workflowFailure("docgen", args.StepNumber, err.Error()), nil
	}
	a := args.stepArgs
	a.settle("low")
	done, total := args.NumFilesDocumented, args.TotalFilesToDocument
	st := stateFor("docgen", c, a.StepNumber)
	st.record(a)
	if failed := st.unkept("docgen", a.StepNumber); failed != nil {
		return failed, nil
	}
	resp := map[string]any{
		"step_number": a.StepNumber, "total_steps": max(a.TotalSteps, 1+total), "next_step_required": a.NextStepRequired,
		"documentation_analysis_status": map[string]any{"files_checked": len(st.FilesChecked), "relevant_files": len(st.RelevantFiles),
			"num_files_documented": done, "total_files_to_document": total,
			"documentation_strategies": docStrategies(args)},
		"metadata": &reply.Metadata{ToolName: "docgen"},
	}
	switch {
	case !a.NextStepRequired && done < total:
		resp["status"] = "documentation_analysis_required"
		resp["next_step_required"] = true
		resp["documentation_analysis_required"] = true
		resp["next_steps"] = fmt.Sprintf("CRITICAL ERROR: %d of %d files are documented. You must continue: document "+
			"the next file, then call docgen with step_number: %d and num_files_documented: %d. Do not finish until every "+
			"file is documented.", done, total, a.StepNumber+1, done+1)
	case a.NextStepRequired:
		resp["status"] = "pause_for_documentation_analysis"
		resp["documentation_analysis_required"] = true
		var actions []string
		if a.StepNumber == 1 {
			actions = []string{"Discovery only: do not change any code or documentation yet",
				"List every file that needs documentation and set total_files_to_document to their number",
				"Note the documentation style already in use"}
		} else {
			actions = []string{"Document exactly one file, completely: every function, class and module",
				"Keep the code's logic untouched; report bugs you notice instead of fixing them",
				fmt.Sprintf("Then raise num_files_documented to %d", done+1)}
		}
		resp["required_actions"] = anyList(actions)
		resp["next_steps"] = pauseGuidance("docgen", a, actions)
	default:
		resp["status"] = "documentation_analysis_complete"
		resp["documentation_analysis_complete"] = true
		resp["complete_documentation_analysis"] = map[string]any{"initial_request": st.InitialRequest,
			"steps_taken": len(st.History), "files_documented": done, "work_summary": workSummary(st, "docgen")}
		resp["next_steps"] = fmt.Sprintf("Documentation is complete: %d of %d files. Tell the user what was documented "+
			"and any problems you noticed in the code.", done, total)
	}
	return stepResult(c, st, resp, a, nil), nil
}

func docStrategies(a docgenArgs) map[string]any {
	return map[string]any{
		"complexity": a.DocumentComplexity, "flow": a.DocumentFlow, "update_existing": a.UpdateExisting,
		"comments_on_complex_logic": a.CommentsOnComplexLogic,
	}
}
