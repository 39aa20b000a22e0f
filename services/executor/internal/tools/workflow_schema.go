package tools

import (
	"maps"

	"github.com/google/jsonschema-go/jsonschema"
)

// defaultConfidences is the common confidence scale; refactor has its own.
var defaultConfidences = []string{"exploring", "low", "medium", "high", "very_high", "almost_certain", "certain"}

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

// stepping is how every step-based tool is driven, said once in each
// tool's description instead of in each of its step fields.
const stepping = " One call per step, working in between; step 1 states the task; next_step_required false " +
	"ends. Paths absolute."

// expertFinal is what the final step of an expert workflow does.
const expertFinal = " The last step sends relevant_files to the expert."

// stepFields are the arguments that drive any step-based tool; the
// tool's description says how (stepping).
func stepFields() map[string]*jsonschema.Schema {
	return map[string]*jsonschema.Schema{
		"step":               str(""),
		"step_number":        integer("", 1, maxSteps),
		"total_steps":        integer("", 1, maxSteps),
		"next_step_required": boolean(""),
		"continuation_id":    str(""),
	}
}

// workflowSchema is the input schema of an investigating workflow tool:
// the step fields, what was found, and the tool's own fields. withModel
// adds the model settings.
func workflowSchema(c Catalog, fields map[string]*jsonschema.Schema, required, omit []string, confidences []string,
	withModel bool) *jsonschema.Schema {
	props := stepFields()
	maps.Copy(props, map[string]*jsonschema.Schema{
		"findings":         str(""),
		"files_checked":    strList(""),
		"relevant_files":   strList(""),
		"relevant_context": strList(""),
		// As the reference's schema: any object is an issue. Its fields
		// are described, not typed: a severity of the agent's own, a number
		// or none is an issue still.
		"issues_found": {Type: "array", Items: &jsonschema.Schema{
			Type: "object",
			Properties: map[string]*jsonschema.Schema{
				"severity":    {Description: "critical, high, medium or low"},
				"description": {Description: "what is wrong, and where"},
			},
		}},
		"confidence":          enum("", confidences...),
		"hypothesis":          str(""),
		"use_assistant_model": on(""),
		"images":              strList(""),
	})
	if withModel {
		maps.Copy(props, modelSettings(c))
	}
	maps.Copy(props, fields)
	for _, k := range omit {
		delete(props, k)
	}
	return object(props, append([]string{"step", "step_number", "total_steps", "next_step_required", "findings"},
		required...)...)
}
