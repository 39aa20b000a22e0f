package call

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
)

// Tool is a tool as the executor describes it, with its schema compiled.
type Tool struct {
	*executorv1.Tool
	schema *jsonschema.Resolved
}

// NewTool compiles a tool's input schema.
func NewTool(t *executorv1.Tool) (*Tool, error) {
	raw, err := json.Marshal(t.GetInputSchema().AsMap())
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
	return &Tool{Tool: t, schema: resolved}, nil
}

// Validate checks arguments against the schema and words the failure for
// the agent that sent them.
func (t *Tool) Validate(args map[string]any) error {
	if err := t.schema.Validate(args); err != nil {
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "validating") {
			msg = msg[i+2:]
		}
		return fmt.Errorf("invalid arguments for %s: %s; see the tool's input schema", t.GetName(), msg)
	}
	return nil
}

// declares tells whether the tool's schema has the named property.
func (t *Tool) declares(name string) bool {
	props, _ := t.GetInputSchema().AsMap()["properties"].(map[string]any)
	_, ok := props[name]
	return ok
}
