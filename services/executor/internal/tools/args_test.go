package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/jsonschema-go/jsonschema"
)

// argTypes is the struct each tool reads its arguments into.
var argTypes = map[string]func() any{
	"chat":       func() any { return &chatArgs{} },
	"clink":      func() any { return &clinkArgs{} },
	"thinkdeep":  func() any { return &workflowArgs{} },
	"planner":    func() any { return &plannerArgs{} },
	"consensus":  func() any { return &consensusArgs{} },
	"codereview": func() any { return &workflowArgs{} },
	"precommit":  func() any { return &workflowArgs{} },
	"debug":      func() any { return &workflowArgs{} },
	"secaudit":   func() any { return &workflowArgs{} },
	"docgen":     func() any { return &docgenArgs{} },
	"analyze":    func() any { return &workflowArgs{} },
	"refactor":   func() any { return &workflowArgs{} },
	"tracer":     func() any { return &tracerArgs{} },
	"testgen":    func() any { return &workflowArgs{} },
	"challenge":  func() any { return &promptArgs{} },
	"apilookup":  func() any { return &promptArgs{} },
	"listmodels": func() any { return &struct{}{} },
	"version":    func() any { return &struct{}{} },
}

// TestArgumentsMatchSchemas: every argument a tool's schema declares, at
// any depth, survives decoding into the tool's struct, so a field the
// schema offers is never silently dropped (a misspelt json name, or two
// embedded fields of one name, which encoding/json ignores both of).
func TestArgumentsMatchSchemas(t *testing.T) {
	t.Parallel()
	for _, tool := range All() {
		newArgs, ok := argTypes[tool.Name]
		if !ok {
			t.Errorf("%s: no argument struct listed", tool.Name)
			continue
		}
		schema := tool.Schema(goldenCatalog(true))
		sent := sample(schema).(map[string]any)
		dst := newArgs()
		if err := decodeArgs(tool.Name, sent, dst); err != nil {
			t.Errorf("%s: %v", tool.Name, err)
			continue
		}
		raw, err := json.Marshal(dst)
		if err != nil {
			t.Fatal(err)
		}
		var back map[string]any
		if err := json.Unmarshal(raw, &back); err != nil {
			t.Fatal(err)
		}
		for name := range schema.Properties {
			if diff := cmp.Diff(sent[name], back[name]); diff != "" {
				t.Errorf("%s: argument %s does not survive decoding (-sent +decoded):\n%s", tool.Name, name, diff)
			}
		}
	}
}

// sample is a value the schema accepts, with every property set.
func sample(s *jsonschema.Schema) any {
	switch {
	case len(s.Enum) > 0:
		return s.Enum[0]
	case s.Type == "string":
		return "text"
	case s.Type == "integer":
		return *s.Maximum
	case s.Type == "number":
		return 0.5
	case s.Type == "boolean":
		return true
	case s.Type == "array" && s.Items != nil:
		return []any{sample(s.Items)}
	}
	obj := map[string]any{}
	for name, p := range s.Properties {
		obj[name] = sample(p)
	}
	return obj
}

func TestDecodeArgsWordsAMismatchInJSONTerms(t *testing.T) {
	t.Parallel()
	a := newWorkflowArgs()
	err := decodeArgs("debug", map[string]any{"step_number": "two"}, &a)
	if err == nil || err.Error() != "invalid arguments for debug: step_number must be an integer" {
		t.Errorf("err = %v", err)
	}
	err = decodeArgs("consensus", map[string]any{"models": []any{"gpt-5"}}, &consensusArgs{})
	if err == nil || !strings.Contains(err.Error(), "must be an object") {
		t.Errorf("err = %v", err)
	}
}

func TestDefaultsSurviveAnOmittedArgument(t *testing.T) {
	t.Parallel()
	a := newWorkflowArgs()
	if err := decodeArgs("precommit", map[string]any{"step": "s", "step_number": 3.0}, &a); err != nil {
		t.Fatal(err)
	}
	a.settle("low")
	want := stepArgs{Step: "s", StepNumber: 3, TotalSteps: 3, UseAssistant: true, Confidence: "low"}
	if diff := cmp.Diff(want, a.stepArgs); diff != "" {
		t.Errorf("step (-want +got):\n%s", diff)
	}
	if !a.IncludeStaged || !a.IncludeUnstaged {
		t.Errorf("include_staged %v, include_unstaged %v; both default to true", a.IncludeStaged, a.IncludeUnstaged)
	}
}
