package call

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/textcut"
)

// Tool is a tool as the executor describes it, with its schema compiled.
type Tool struct {
	*executorv1.Tool
	schema *jsonschema.Resolved
	props  map[string]bool // the argument names the schema declares
	// numbers are the bounds of the top-level numeric arguments.
	numbers map[string]numberBounds
	// stringLists are the top-level arguments that are lists of strings.
	stringLists map[string]bool
}

// NewTool compiles a tool's input schema for validation. What the schema
// advertises and the reference's server did not hold a call to is not
// held here either: model is required in auto mode, but a call without one
// is still served (a continuation inherits the thread's model, and
// otherwise auto mode picks); precommit asks for at least 3 steps, but a
// continued conversation's fast track takes fewer.
func NewTool(t *executorv1.Tool) (*Tool, error) {
	schema := t.GetInputSchema().AsMap()
	if req, ok := schema["required"].([]any); ok {
		schema["required"] = slices.DeleteFunc(slices.Clone(req), func(v any) bool { return v == "model" })
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		if total, ok := props["total_steps"].(map[string]any); ok {
			if least, ok := total["minimum"].(float64); ok && least > 1 {
				total["minimum"] = 1.0
			}
		}
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return nil, err
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t.GetName(), err)
	}
	resolved, err := s.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t.GetName(), err)
	}
	props, lists := map[string]bool{}, map[string]bool{}
	for name, p := range s.Properties {
		props[name] = true
		if p != nil && p.Type == "array" && p.Items != nil && p.Items.Type == "string" {
			lists[name] = true
		}
	}
	return &Tool{Tool: t, schema: resolved, props: props, numbers: numericProperties(&s), stringLists: lists}, nil
}

// listsFromStrings reads a list of strings sent as one string as the list
// it names: none for an empty one (as clients say "none"), a list in JSON
// (some clients send an array so), or else the one string (a path). The
// reference took such a string and dropped it.
func (t *Tool) listsFromStrings(args map[string]any) {
	for name := range t.stringLists {
		s, ok := args[name].(string)
		if !ok {
			continue
		}
		if strings.TrimSpace(s) == "" {
			args[name] = []any{}
			continue
		}
		var list []string
		if strings.HasPrefix(strings.TrimSpace(s), "[") && json.Unmarshal([]byte(s), &list) == nil {
			out := make([]any, len(list))
			for i, v := range list {
				out[i] = v
			}
			args[name] = out
			continue
		}
		args[name] = []any{s}
	}
}

// propertyPrefix shortens the validator's "validating /properties/x: "
// to "x: ".
var propertyPrefix = regexp.MustCompile(`validating /properties/([^:]+): `)

// Validate checks arguments against the schema and words the failure for
// the agent that sent them.
func (t *Tool) Validate(args map[string]any) error {
	if err := t.schema.Validate(args); err != nil {
		msg := strings.TrimPrefix(err.Error(), "validating root: ")
		msg = propertyPrefix.ReplaceAllString(msg, "$1: ")
		return fmt.Errorf("invalid arguments for %s: %s. Check the call against the tool's input schema", t.GetName(), msg)
	}
	return nil
}

// declares tells whether the tool's schema has the named property.
func (t *Tool) declares(name string) bool { return t.props[name] }

// Decode reads a call's raw arguments as a JSON object and validates them;
// anything else becomes a tool error the agent can act on.
func (t *Tool) Decode(raw json.RawMessage) (map[string]any, *Outcome) {
	args := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		var err error
		if args, err = decodeObject(raw); err != nil {
			return nil, ptr(toolError(t.GetName(), "invalid arguments for "+t.GetName()+": they must be a JSON object", nil))
		}
	}
	t.listsFromStrings(args)
	// Numbers are checked before the schema is: its validator words a
	// bound badly and cannot see a number too large to decode.
	if err := t.checkNumbers(args); err != nil {
		return nil, ptr(toolError(t.GetName(), fmt.Sprintf("invalid arguments for %s: %s. Check the call against "+
			"the tool's input schema", t.GetName(), err), nil))
	}
	if err := t.Validate(args); err != nil {
		return nil, ptr(toolError(t.GetName(), err.Error(), nil))
	}
	return args, nil
}

// asWorkflowError words a plain tool error the way workflow tools report
// failures (reply.ForWorkflow). Other statuses (resend_prompt,
// code_too_large) and other tools pass unchanged.
func (t *Tool) asWorkflowError(out Outcome, args map[string]any) Outcome {
	if !t.GetWorkflow() || !out.IsError || out.Reply == nil || out.keepsToolErrorShape {
		return out
	}
	step := 0
	// Arguments refused for their numbers come here unchecked: 2^63 must
	// not come back as a negative step.
	if n, ok := args["step_number"].(float64); ok && n >= 0 && n <= math.MaxInt32 {
		step = int(n)
	}
	out.Reply = out.Reply.ForWorkflow(step)
	return out
}

// maxQuoted bounds a refusal (toolError), which may quote what the call
// sent: the schema's validator names every property it did not expect, and
// 300,000 of them made an answer of 8 MB.
const maxQuoted = 3 << 10

// quoteLittle is msg cut to maxQuoted bytes, on a character's boundary,
// saying how much was cut.
func quoteLittle(msg string) string {
	if len(msg) <= maxQuoted {
		return msg
	}
	cut := textcut.Prefix(msg, maxQuoted)
	return fmt.Sprintf("%s… (%d more bytes)", cut, len(msg)-len(cut))
}
