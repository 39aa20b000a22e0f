package routing

import (
	"errors"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/router/internal/catalogue"
)

func providers(t *testing.T, configured map[string][]string) []*Provider {
	t.Helper()
	var out []*Provider
	for _, name := range []string{"gemini", "openai", "azure", "xai", "dial", "custom", "openrouter"} {
		models, err := catalogue.Embedded(name)
		if err != nil {
			t.Fatal(err)
		}
		allowed, ok := configured[name]
		out = append(out, &Provider{Name: name, Configured: ok, Models: models, Allowed: allowed})
	}
	return out
}

func TestAutoModePicksByCategoryAndRank(t *testing.T) {
	tests := []struct {
		name       string
		configured map[string][]string
		want       map[string]string // category -> model
	}{
		{"gemini", map[string][]string{"gemini": nil}, map[string]string{
			ExtendedReasoning: "gemini-3-pro-preview", FastResponse: "gemini-2.5-flash", Balanced: "gemini-3-pro-preview"}},
		{"openai", map[string][]string{"openai": nil}, map[string]string{
			ExtendedReasoning: "gpt-5.1-codex", FastResponse: "gpt-5.1-codex-mini", Balanced: "gpt-5.1-codex"}},
		{"xai", map[string][]string{"xai": nil}, map[string]string{ExtendedReasoning: "grok-4", FastResponse: "grok-4-1-fast-reasoning"}},
		{"custom only", map[string][]string{"custom": nil}, map[string]string{ExtendedReasoning: "llama3.2", FastResponse: "llama3.2"}},
		// Upstream picked the alias "5.1" alphabetically; zen ranks.
		{"openrouter only", map[string][]string{"openrouter": nil}, map[string]string{
			ExtendedReasoning: "openai/gpt-5.1-codex", FastResponse: "openai/gpt-5.1-codex-mini"}},
		{"allow-list", map[string][]string{"openai": {"o3", "o4-mini"}}, map[string]string{
			ExtendedReasoning: "o3", FastResponse: "o4-mini"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reg, err := New(providers(t, tt.configured), "auto")
			if err != nil {
				t.Fatal(err)
			}
			for cat, want := range tt.want {
				e, why, err := reg.Resolve("auto", cat)
				if err != nil || e.Name != want || !strings.Contains(why, want) {
					t.Errorf("%s: %s (%q, %v), want %s", cat, e.Name, why, err, want)
				}
			}
		})
	}
}

func TestResolutionFollowsPriorityAndAllowLists(t *testing.T) {
	reg, err := New(providers(t, map[string][]string{"openai": {"gpt-5", "mini"}, "openrouter": nil}), "gpt-5")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, provider, canonical string
		err                       bool
	}{
		{"GPT5", "openai", "gpt-5", false},
		{"mini", "openai", "gpt-5-mini", false},
		{"o3", "openrouter", "openai/o3", false},        // OpenAI does not allow it; OpenRouter's alias serves it
		{"openai/o3", "openrouter", "openai/o3", false}, // as does its own name
		{"sonnet", "openrouter", "anthropic/claude-sonnet-4.5", false},
		{"someone/new-model", "openrouter", "someone/new-model", false}, // generic capabilities
		{"new-model", "", "", true},                                     // OpenRouter wants vendor/model
	}
	for _, tt := range tests {
		e, _, err := reg.Resolve(tt.name, "")
		if tt.err {
			if !errors.Is(err, ErrNotAvailable) {
				t.Errorf("%s: err = %v, want not available", tt.name, err)
			}
			continue
		}
		if err != nil || e.Provider.Name != tt.provider || e.Name != tt.canonical {
			t.Errorf("%s: %s/%s (%v), want %s/%s", tt.name, e.Provider.Name, e.Name, err, tt.provider, tt.canonical)
		}
	}
	if e, _, _ := reg.Resolve("someone/new-model", ""); e.ContextWindow != 32_768 || e.IntelligenceScore != 9 {
		t.Errorf("generic capabilities = %+v", e.Model)
	}
	gpt5, _, _ := reg.Resolve("gpt-5", "")
	alts := reg.Alternatives(gpt5)
	if len(alts) != 1 || alts[0].Name != "openai/gpt-5" {
		t.Errorf("alternatives of gpt-5 = %v, want openai/gpt-5 at OpenRouter", alts)
	}
}

func TestEffectiveAutoMode(t *testing.T) {
	reg, err := New(providers(t, map[string][]string{"custom": nil}), "gpt-5")
	if err != nil {
		t.Fatal(err)
	}
	if !reg.AutoMode() {
		t.Error("DEFAULT_MODEL=gpt-5 with only a local server configured should be effective auto mode")
	}
	if e, _, err := reg.Resolve("", FastResponse); err != nil || e.Name != "llama3.2" {
		t.Errorf("no model named: %v %v", e.Name, err)
	}
}
