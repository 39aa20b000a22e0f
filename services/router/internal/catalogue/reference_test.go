package catalogue

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// referenceOpenRouter is the reference server's OpenRouter catalogue
// (9.8.2, 27 models): each model with every alias it answers to. A .env
// written for the reference names models by these, so each must mean here
// what it means there (issue 14, item 1).
var referenceOpenRouter = map[string][]string{
	"anthropic/claude-opus-4.5":                 {"opus", "opus4.5", "claude-opus"},
	"anthropic/claude-sonnet-4.5":               {"sonnet", "sonnet4.5"},
	"anthropic/claude-opus-4.1":                 {"opus4.1"},
	"anthropic/claude-sonnet-4.1":               {"sonnet4.1"},
	"anthropic/claude-3.5-haiku":                {"haiku"},
	"google/gemini-3-pro-preview":               {"pro", "gemini-pro", "gemini", "gemini3", "pro-openrouter"},
	"google/gemini-2.5-pro":                     {"gemini-2.5", "pro-2.5-openrouter"},
	"google/gemini-2.5-flash":                   {"flash", "gemini-flash"},
	"mistralai/mistral-large-2411":              {"mistral-large", "mistral"},
	"meta-llama/llama-3-70b":                    {"llama", "llama3", "llama3-70b", "llama-70b", "llama3-openrouter"},
	"deepseek/deepseek-r1-0528":                 {"deepseek-r1", "deepseek", "r1", "deepseek-thinking"},
	"perplexity/llama-3-sonar-large-32k-online": {"perplexity", "sonar", "perplexity-online"},
	"openai/o3":                 {"o3"},
	"openai/o3-mini":            {"o3-mini", "o3mini"},
	"openai/o3-mini-high":       {"o3-mini-high", "o3mini-high"},
	"openai/o3-pro":             {"o3pro"},
	"openai/o4-mini":            {"o4-mini", "o4mini"},
	"openai/gpt-5":              {"gpt5"},
	"openai/gpt-5.2-pro":        {"gpt5.2-pro", "gpt5.2pro", "gpt5pro"},
	"openai/gpt-5-codex":        {"codex", "gpt5codex"},
	"openai/gpt-5-mini":         {"gpt5mini"},
	"openai/gpt-5-nano":         {"gpt5nano"},
	"openai/gpt-5.2":            {"gpt5.2", "gpt-5.2", "5.2", "gpt5.1", "gpt-5.1", "5.1"},
	"openai/gpt-5.1-codex":      {"gpt5.1-codex", "gpt-5.1-codex", "gpt5.1code", "gpt-5.1-code", "codex-5.1"},
	"openai/gpt-5.1-codex-mini": {"gpt5.1-codex-mini", "gpt-5.1-codex-mini", "codex-mini", "5.1-codex-mini"},
	"x-ai/grok-4":               {"grok-4", "grok4", "grok"},
	"x-ai/grok-4.1-fast":        {"grok-4.1-fast-openrouter", "grok-4.1-openrouter"},
}

// owner finds the model that answers to name, as routing matches it.
func owner(models []Model, name string) string {
	for _, m := range models {
		if strings.EqualFold(m.Name, name) {
			return m.Name
		}
		for _, a := range m.Aliases {
			if strings.EqualFold(a, name) {
				return m.Name
			}
		}
	}
	return ""
}

func TestOpenRouterCarriesTheReferenceModelsAndAliases(t *testing.T) {
	t.Parallel()
	models, err := Embedded("openrouter")
	if err != nil {
		t.Fatal(err)
	}
	want, got := map[string]string{}, map[string]string{}
	for model, aliases := range referenceOpenRouter {
		for _, name := range append([]string{model}, aliases...) {
			want[name] = model
			got[name] = owner(models, name)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("what each reference name resolves to on OpenRouter (-reference +zen):\n%s", diff)
	}
}

// zen's own or- names stay, beside the reference's: configurations written
// for earlier zen releases keep working.
func TestOpenRouterKeepsZensOwnAliases(t *testing.T) {
	t.Parallel()
	models, err := Embedded("openrouter")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"or-flash": "google/gemini-2.5-flash", "or-pro": "google/gemini-3-pro-preview", "or-o3": "openai/o3",
		"or-o3-mini": "openai/o3-mini", "or-o3-pro": "openai/o3-pro", "or-o4-mini": "openai/o4-mini",
		"or-gpt5": "openai/gpt-5", "or-codex": "openai/gpt-5-codex", "or-grok-4": "x-ai/grok-4",
		"o3-pro": "openai/o3-pro",
	}
	got := map[string]string{}
	for name := range want {
		got[name] = owner(models, name)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("zen's own OpenRouter aliases (-want +got):\n%s", diff)
	}
}
