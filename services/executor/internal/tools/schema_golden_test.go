package tools

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
)

var update = flag.Bool("update", false, "rewrite the golden schema files")

// goldenCatalog is a fixed model list, so schemas do not depend on keys.
func goldenCatalog(auto bool) Catalog {
	return Catalog{AutoMode: auto, DefaultModel: "gpt-5", CLIs: []string{"claude", "codex", "gemini"},
		CLIRoles: []string{"codereviewer", "default", "planner"},
		Ranked: []*routerv1.Model{
			{Name: "gemini-2.5-pro", IntelligenceScore: 18, ContextWindow: 1_048_576, SupportsExtendedThinking: true, AllowCodeGeneration: true},
			{Name: "gpt-5", IntelligenceScore: 16, ContextWindow: 400_000, SupportsExtendedThinking: true},
		}}
}

// TestSchemasMatchGolden pins every tool's input schema, in auto mode, as
// ListTools carries it. Refresh with: go test ./internal/tools -run Golden -update
func TestSchemasMatchGolden(t *testing.T) {
	var order []string
	for _, tool := range All() {
		order = append(order, tool.Name)
		schema, err := wire(tool.Schema(goldenCatalog(true)))
		if err != nil {
			t.Fatal(err)
		}
		got, err := json.MarshalIndent(map[string]any{
			"name": tool.Name, "read_only": tool.ReadOnly, "category": tool.Category, "input_schema": schema.AsMap(),
		}, "", "  ")
		if err != nil {
			t.Fatal(err)
		}
		compareGolden(t, filepath.Join("testdata", "schemas", tool.Name+".json"), append(got, '\n'))
	}
	compareGolden(t, filepath.Join("testdata", "schemas", "ORDER"), []byte(strings.Join(order, "\n")+"\n"))
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != string(got) {
		t.Errorf("%s differs from the schema the code builds; if the change is intended, run go test -run Golden -update\n--- got ---\n%s", path, got)
	}
}

// TestSchemaBasics: every schema is a closed object (apilookup aside, as in
// the reference), every required field is declared, and `model` is never
// required: leaving it out lets zen pick (auto mode) or uses DEFAULT_MODEL,
// as modelrule says.
func TestSchemaBasics(t *testing.T) {
	for _, auto := range []bool{true, false} {
		for _, tool := range All() {
			s := tool.Schema(goldenCatalog(auto))
			closed := s.AdditionalProperties != nil && s.AdditionalProperties.Not != nil
			if tool.Name != "apilookup" && !closed {
				t.Errorf("%s: additionalProperties is not false", tool.Name)
			}
			for _, r := range s.Required {
				if _, ok := s.Properties[r]; !ok {
					t.Errorf("%s requires undeclared %v", tool.Name, r)
				}
			}
			if slices.Contains(s.Required, "model") {
				t.Errorf("%s auto=%v: model is required; leaving it out is part of the rule", tool.Name, auto)
			}
		}
	}
}
