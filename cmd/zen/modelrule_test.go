package main

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/modelrule"
)

// oneLine collapses runs of white space, so wrapped Markdown reads as the
// sentence it is.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestOneRuleForModel: in auto mode the instructions, the tools' schemas,
// listmodels, the slash commands and the README state modelrule's rule in
// its words; no schema requires `model`, and a chat that leaves it out
// gets zen's pick, the model `auto` gets.
func TestOneRuleForModel(t *testing.T) {
	fake := fakemodel.New(t)
	cs := serveStack(t, fakeEnv(fake)).session
	mode := modelrule.Mode{Auto: true}
	rule := mode.Rule()

	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(oneLine(string(readme)), rule) {
		t.Errorf("the README does not state the rule %q", rule)
	}
	if got := cs.InitializeResult().Instructions; !strings.Contains(got, rule) {
		t.Errorf("instructions = %q; want the rule %q", got, rule)
	}
	tools, err := cs.ListTools(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		schema, _ := tool.InputSchema.(map[string]any)
		required, _ := schema["required"].([]any)
		if slices.Contains(required, any("model")) {
			t.Errorf("%s requires model", tool.Name)
		}
		if tool.Name != "chat" {
			continue
		}
		props, _ := schema["properties"].(map[string]any)
		model, _ := props["model"].(map[string]any)
		if desc, _ := model["description"].(string); !strings.HasPrefix(desc, mode.Field()) {
			t.Errorf("chat's model = %q; want it to begin with the rule's field text %q", desc, mode.Field())
		}
	}
	if res, _ := callTool(t, cs, "listmodels", map[string]any{}); !strings.Contains(text(res), rule) {
		t.Errorf("listmodels does not state the rule %q:\n%s", rule, text(res))
	}
	prompts, err := cs.ListPrompts(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	described := 0
	for _, p := range prompts.Prompts {
		for _, a := range p.Arguments {
			if a.Name != "model" {
				continue
			}
			described++
			if a.Description != rule {
				t.Errorf("/%s's model argument = %q; want the rule %q", p.Name, a.Description, rule)
			}
		}
	}
	if described == 0 {
		t.Error("no slash command takes a model")
	}

	// Leaving model out is zen's pick: the model `auto` gets.
	picked := map[string]string{}
	for name, args := range map[string]map[string]any{
		"no model": {"prompt": "hi", "working_directory_absolute_path": t.TempDir()},
		"auto":     {"prompt": "hi", "working_directory_absolute_path": t.TempDir(), "model": "auto"},
	} {
		res, got := callTool(t, cs, "chat", args)
		if res.IsError {
			t.Fatalf("chat with %s: %s", name, text(res))
		}
		meta, _ := got["metadata"].(map[string]any)
		used, _ := meta["model_used"].(string)
		reqs := fake.Requests()
		if used == "" || !strings.EqualFold(reqs[len(reqs)-1].Model, used) {
			t.Errorf("chat with %s: model_used %q, the model was asked as %q", name, used, reqs[len(reqs)-1].Model)
		}
		picked[name] = used
	}
	if diff := cmp.Diff(picked["auto"], picked["no model"]); diff != "" || picked["auto"] == "" {
		t.Errorf("leaving model out picked other than auto (-auto +none):\n%s", diff)
	}
}
