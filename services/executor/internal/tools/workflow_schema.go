package tools

import "maps"

// defaultConfidences is the common confidence scale; refactor has its own.
var defaultConfidences = []any{"exploring", "low", "medium", "high", "very_high", "almost_certain", "certain"}

// Bounds of the integer arguments. Every integer has both a minimum and a
// maximum, which the edge enforces before a call runs: an unbounded count
// (2^63) would wrap to a negative number once stored as an int.
const (
	// maxSteps is far beyond any real workflow (each step is a stored turn,
	// and a thread holds MAX_CONVERSATION_TURNS of them).
	maxSteps = 1000
	// maxFiles bounds file counts (docgen's), well beyond a real project.
	maxFiles = 100_000
)

func integer(desc string, minimum, maximum int) map[string]any {
	return map[string]any{"type": "integer", "minimum": minimum, "maximum": maximum, "description": desc}
}

func boolean(desc string) map[string]any {
	return map[string]any{"type": "boolean", "description": desc}
}

func enum(desc string, values ...any) map[string]any {
	return map[string]any{"type": "string", "enum": values, "description": desc}
}

// stepFields are the arguments that drive any step-based tool.
func stepFields() map[string]any {
	return map[string]any{
		"step":               str("What you do in this step and why. Step 1 states the task and your plan."),
		"step_number":        integer("This step's number, from 1.", 1, maxSteps),
		"total_steps":        integer("Your estimate of the steps needed; raise it as you go.", 1, maxSteps),
		"next_step_required": boolean("true to continue with another step, false on the final step."),
	}
}

// workflowSchema is the input schema of an investigating workflow tool:
// the step fields, what was found, and the tool's own fields. withModel
// adds the model settings.
func workflowSchema(c Catalog, fields map[string]any, required, omit []string, confidences []any, withModel bool) map[string]any {
	props := stepFields()
	maps.Copy(props, map[string]any{
		"findings":         str("What this step found: facts, evidence, what was ruled out."),
		"files_checked":    strList("Absolute paths of every file examined, relevant or not."),
		"relevant_files":   strList("Absolute paths of the files that matter; the final step sends them to the expert."),
		"relevant_context": strList("Functions, methods or classes that matter, e.g. 'Parser.parse'."),
		"issues_found": map[string]any{"type": "array", "description": "Issues found, each with a severity and a description.",
			"items": map[string]any{"type": "object", "properties": map[string]any{
				"severity":    enum("", "critical", "high", "medium", "low"),
				"description": str(""),
			}, "required": []any{"severity", "description"}}},
		"confidence":          enum("How sure you are of your findings.", confidences...),
		"hypothesis":          str("Your current theory, when you have one."),
		"use_assistant_model": map[string]any{"type": "boolean", "default": true, "description": "false to finish without the expert model."},
		"images":              strList("Absolute paths of images, or data:image URLs."),
		"continuation_id":     str("The continuation_id of an earlier answer, to continue that thread."),
	})
	if withModel {
		maps.Copy(props, modelSettings(c))
	}
	maps.Copy(props, fields)
	for _, k := range omit {
		delete(props, k)
	}
	req := append([]string{"step", "step_number", "total_steps", "next_step_required", "findings"}, required...)
	if withModel {
		req = requiredWithModel(c, req...)
	}
	return object(props, req...)
}

// modelSettings are the model, temperature and thinking_mode arguments.
func modelSettings(c Catalog) map[string]any {
	return map[string]any{
		"model": modelField(c),
		"temperature": map[string]any{"type": "number", "minimum": 0, "maximum": 1,
			"description": "0 for focused answers, 1 for more varied ones."},
		"thinking_mode": enum("How much the model should think first, for models that can.", thinkingModes...),
	}
}

// workflowOutputSchema describes a workflow step's result: an object with
// a status, the step counters and tool-specific keys.
func workflowOutputSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"status":             map[string]any{"type": "string"},
			"step_number":        map[string]any{"type": "integer"},
			"total_steps":        map[string]any{"type": "integer"},
			"next_step_required": map[string]any{"type": "boolean"},
			"continuation_id":    map[string]any{"type": "string"},
			"metadata":           map[string]any{"type": "object"},
		},
		"required": []any{"status"},
	}
}
