package tools

import (
	"context"
	"fmt"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
)

// tracer and docgen are workflows the agent does alone: zen keeps the
// state and says what to do next; no model is called.

func tracerTool() Tool {
	return Tool{
		Name: "tracer", Title: "Trace code",
		Description: "Trace how code runs (precision mode: the call flow of one method) or how it connects " +
			"(dependencies mode: who uses a class and what it uses), step by step. No model is called.",
		Category: ExtendedReasoning, ReadOnly: true, Workflow: true,
		Schema: func(c Catalog) map[string]any {
			s := workflowSchema(c, map[string]any{
				"target_description": str("What to trace and why: the method, class or module, and the question."),
				"trace_mode":         enum("precision: execution flow; dependencies: structure; ask: let the user choose.", "precision", "dependencies", "ask"),
				"model":              str("Accepted for compatibility; the tracer never calls a model."),
			}, []string{"target_description", "trace_mode"}, []string{"issues_found", "hypothesis", "use_assistant_model"}, defaultConfidences, false)
			return s
		},
		Output: workflowOutputSchema(),
		Run:    runTracer,
	}
}

func runTracer(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
	a := readStep(c.Args, "exploring")
	mode := orDefault(c.Args["trace_mode"], "ask")
	if a.StepNumber == 1 && mode == "ask" {
		return &executorv1.ToolResult{Payload: payload(map[string]any{
			"status": "mode_selection_required", "step_number": 1, "total_steps": a.TotalSteps, "next_step_required": true,
			"mode_options": map[string]any{
				"precision":    "Follow the execution of one method or function: what it calls, in order, with branches and side effects.",
				"dependencies": "Map how a class or module connects: what depends on it and what it depends on.",
			},
			"next_steps": "Ask the user which trace mode they want (precision or dependencies), then call tracer again " +
				"with step_number: 1 and that trace_mode.",
			"metadata": map[string]any{"tool_name": "tracer", "trace_mode": "ask"},
		})}, nil
	}
	st := stateFor("tracer", c, a.StepNumber)
	st.TraceMode = mode
	st.record(a)
	resp := map[string]any{
		"step_number": a.StepNumber, "total_steps": a.TotalSteps, "next_step_required": a.NextStepRequired,
		"tracer_status": map[string]any{"files_checked": len(st.FilesChecked), "relevant_files": len(st.RelevantFiles),
			"relevant_context": len(st.RelevantContext), "current_confidence": st.Confidence, "trace_mode": mode},
		"trace_config": map[string]any{"trace_mode": mode, "target_description": strArg(c.Args, "target_description")},
		"metadata":     map[string]any{"tool_name": "tracer", "trace_mode": mode},
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
		Description: "Document code file by file: step 1 finds what needs documenting, each later step documents one " +
			"file. Counters make sure no file is skipped. No model is called.",
		Category: ExtendedReasoning, ReadOnly: true, Workflow: true,
		Schema: func(c Catalog) map[string]any {
			return workflowSchema(c, map[string]any{
				"document_complexity":       map[string]any{"type": "boolean", "default": true, "description": "Document algorithmic complexity (Big O)."},
				"document_flow":             map[string]any{"type": "boolean", "default": true, "description": "Document call flow and dependencies."},
				"update_existing":           map[string]any{"type": "boolean", "default": true, "description": "Improve existing documentation that is wrong or thin."},
				"comments_on_complex_logic": map[string]any{"type": "boolean", "default": true, "description": "Add comments inside complex logic."},
				"num_files_documented":      integer("Files documented so far.", 0, maxFiles),
				"total_files_to_document":   integer("Files to document in all, counted in step 1.", 0, maxFiles),
			}, []string{"document_complexity", "document_flow", "update_existing", "comments_on_complex_logic",
				"num_files_documented", "total_files_to_document"}, []string{"hypothesis", "use_assistant_model", "images"}, defaultConfidences, false)
		},
		Output: workflowOutputSchema(),
		Run:    runDocgen,
	}
}

func runDocgen(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
	a := readStep(c.Args, "low")
	done, total := intArg(c.Args, "num_files_documented", 0), intArg(c.Args, "total_files_to_document", 0)
	st := stateFor("docgen", c, a.StepNumber)
	st.record(a)
	resp := map[string]any{
		"step_number": a.StepNumber, "total_steps": max(a.TotalSteps, 1+total), "next_step_required": a.NextStepRequired,
		"documentation_analysis_status": map[string]any{"files_checked": len(st.FilesChecked), "relevant_files": len(st.RelevantFiles),
			"num_files_documented": done, "total_files_to_document": total,
			"documentation_strategies": docStrategies(c.Args)},
		"metadata": map[string]any{"tool_name": "docgen"},
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

func docStrategies(args map[string]any) map[string]any {
	return map[string]any{
		"complexity": boolArg(args, "document_complexity", true), "flow": boolArg(args, "document_flow", true),
		"update_existing": boolArg(args, "update_existing", true), "comments_on_complex_logic": boolArg(args, "comments_on_complex_logic", true),
	}
}
