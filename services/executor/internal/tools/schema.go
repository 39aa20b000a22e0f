package tools

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/modelrule"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"
)

// Schemas are built with jsonschema-go, the package the edge validates
// arguments with, so what a tool declares is what the edge enforces. Every
// description is one short line: tools/list is loaded into the agent's
// context whole, and a field's name, type and enum usually say enough.

// object is a closed object schema: the edge refuses unknown arguments.
func object(props map[string]*jsonschema.Schema, required ...string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Properties: props, Required: required, AdditionalProperties: closed()}
}

// closed is the false schema, which jsonschema-go writes as false.
func closed() *jsonschema.Schema { return &jsonschema.Schema{Not: &jsonschema.Schema{}} }

func str(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Description: desc}
}

func strList(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "array", Items: &jsonschema.Schema{Type: "string"}, Description: desc}
}

func boolean(desc string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "boolean", Description: desc}
}

// on is a boolean that defaults to true.
func on(desc string) *jsonschema.Schema {
	s := boolean(desc)
	s.Default = json.RawMessage("true")
	return s
}

func integer(desc string, minimum, maximum int) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "integer", Description: desc, Minimum: bound(minimum), Maximum: bound(maximum)}
}

func number(minimum, maximum float64) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "number", Minimum: &minimum, Maximum: &maximum}
}

func bound(n int) *float64 {
	f := float64(n)
	return &f
}

func enum(desc string, values ...string) *jsonschema.Schema {
	return &jsonschema.Schema{Type: "string", Enum: anyList(values), Description: desc}
}

// bare is a schema of the given type and nothing else.
func bare(typ string) *jsonschema.Schema { return &jsonschema.Schema{Type: typ} }

// wire is a schema as ListTools carries it.
func wire(s *jsonschema.Schema) (*structpb.Struct, error) {
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	out := &structpb.Struct{}
	if err := protojson.Unmarshal(raw, out); err != nil {
		return nil, err
	}
	return out, nil
}

// envelopeSchema describes the ToolOutput envelope simple tools return.
func envelopeSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"status":       bare("string"),
			"content":      bare("string"),
			"content_type": enum("", "text", "markdown", "json"),
			"metadata":     bare("object"),
			"continuation_offer": {Type: "object", Properties: map[string]*jsonschema.Schema{
				"continuation_id": bare("string"),
				"note":            bare("string"),
				"remaining_turns": bare("integer"),
			}},
		},
		Required: []string{"status", "content", "content_type", "metadata"},
	}
}

// workflowOutputSchema describes a workflow step's result: an object with
// a status, the step counters and tool-specific keys.
func workflowOutputSchema() *jsonschema.Schema {
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"status":             bare("string"),
			"step_number":        bare("integer"),
			"total_steps":        bare("integer"),
			"next_step_required": bare("boolean"),
			"continuation_id":    bare("string"),
			"metadata":           bare("object"),
		},
		Required: []string{"status"},
	}
}

// statusSchema describes a result of a status and the given strings;
// errors carry the status alone with their content.
func statusSchema(fields ...string) *jsonschema.Schema {
	props := map[string]*jsonschema.Schema{"status": bare("string")}
	for _, f := range fields {
		props[f] = bare("string")
	}
	return &jsonschema.Schema{Type: "object", Properties: props, Required: []string{"status"}}
}

// modelField describes the model argument in modelrule's words: in auto
// mode it lists the best models so the agent can choose without a
// listmodels round trip.
func modelField(c Catalog) *jsonschema.Schema {
	mode := c.modelMode()
	if !mode.Auto {
		return str(mode.Field())
	}
	if len(c.Ranked) == 0 {
		return str(mode.Field() + modelrule.FieldNoModels)
	}
	const shown = 5
	var parts []string
	for _, m := range c.Ranked[:min(shown, len(c.Ranked))] {
		parts = append(parts, modelSummary(m))
	}
	desc := mode.Field() + " " + strings.Join(parts, "; ")
	if extra := len(c.Ranked) - shown; extra > 0 {
		desc += fmt.Sprintf("; +%d more via `listmodels`", extra)
	}
	return str(desc + ".")
}

// modelMode is the catalogue's model selection mode, for modelrule.
func (c Catalog) modelMode() modelrule.Mode {
	return modelrule.Mode{Auto: c.AutoMode, Default: c.DefaultModel}
}

func modelSummary(m *routerv1.Model) string {
	traits := []string{fmt.Sprintf("score %d", m.GetIntelligenceScore()), tokensShort(m.GetContextWindow()) + " ctx"}
	if m.GetSupportsExtendedThinking() {
		traits = append(traits, "thinking")
	}
	if m.GetAllowCodeGeneration() {
		traits = append(traits, "code-gen")
	}
	return fmt.Sprintf("%s (%s)", m.GetName(), strings.Join(traits, ", "))
}

// tokensShort writes 400000 as 400K and 1048576 as 1M.
func tokensShort(n int32) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%dM", (n+500_000)/1_000_000)
	case n >= 1000:
		return fmt.Sprintf("%dK", n/1000)
	}
	return fmt.Sprint(n)
}

// modelSettings are the model, temperature and thinking_mode arguments;
// the range and the enum say what the last two take. None is required:
// without `model` zen picks (auto mode) or uses DEFAULT_MODEL (modelrule).
func modelSettings(c Catalog) map[string]*jsonschema.Schema {
	return map[string]*jsonschema.Schema{
		"model":         modelField(c),
		"temperature":   number(0, 1),
		"thinking_mode": enum("", thinkingModes...),
	}
}
