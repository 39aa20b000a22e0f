package main

import (
	"encoding/json"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestStructuredContentMatchesTheDeclaredOutputSchema(t *testing.T) {
	st := serveStack(t, fakeEnv(fakemodel.New(t)))
	tools, err := st.session.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	calls := map[string]map[string]any{
		"chat":       {"prompt": "hi", "working_directory_absolute_path": t.TempDir(), "model": "llama3.2"},
		"listmodels": {}, "version": {},
	}
	for _, tool := range tools.Tools {
		if tool.OutputSchema == nil {
			t.Errorf("%s declares no output schema", tool.Name)
			continue
		}
		raw, _ := json.Marshal(tool.OutputSchema)
		var schema jsonschema.Schema
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		resolved, err := schema.Resolve(nil)
		if err != nil {
			t.Fatalf("%s: %v", tool.Name, err)
		}
		res, _ := callTool(t, st.session, tool.Name, calls[tool.Name])
		var structured map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &structured)
		if err := resolved.Validate(structured); err != nil {
			t.Errorf("%s: structured content does not match its schema: %v\n%s", tool.Name, err, b)
		}
	}
}
