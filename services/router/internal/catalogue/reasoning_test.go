package catalogue

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWhichModelsTakeAReasoningEffort states, per shipped catalogue, the
// models whose thinking_mode becomes an OpenAI-style reasoning effort:
// every OpenAI reasoning model wherever it is served (issue 14, item 2),
// and at OpenRouter also the other vendors' thinking models, whose effort
// OpenRouter translates. Gemini's models get a thinking budget instead;
// X.AI's Grok 4 refuses an effort.
func TestWhichModelsTakeAReasoningEffort(t *testing.T) {
	t.Parallel()
	openaiReasoning := []string{"gpt-5.2", "gpt-5.1-codex", "gpt-5.1-codex-mini", "gpt-5.2-pro", "gpt-5", "gpt-5-codex",
		"gpt-5-mini", "gpt-5-nano", "o3", "o3-mini", "o3-pro", "o4-mini"}
	want := map[string][]string{
		"openai": openaiReasoning,
		"openrouter": {
			"anthropic/claude-opus-4.5", "anthropic/claude-sonnet-4.5", "anthropic/claude-opus-4.1",
			"anthropic/claude-sonnet-4.1", "google/gemini-3-pro-preview", "google/gemini-2.5-pro",
			"google/gemini-2.5-flash", "deepseek/deepseek-r1-0528", "openai/o3", "openai/o3-mini",
			"openai/o3-mini-high", "openai/o3-pro", "openai/o4-mini", "openai/gpt-5", "openai/gpt-5.2-pro",
			"openai/gpt-5-codex", "openai/gpt-5-mini", "openai/gpt-5-nano", "openai/gpt-5.2", "openai/gpt-5.1-codex",
			"openai/gpt-5.1-codex-mini", "x-ai/grok-4", "x-ai/grok-4.1-fast", "openai/gpt-5.1", "openai/gpt-5-pro",
			"x-ai/grok-4-fast",
		},
		"dial":   {"o3-2025-04-16", "o4-mini-2025-04-16"},
		"gemini": nil, "xai": nil, "custom": nil, "azure": nil,
	}
	for provider := range want {
		models, err := Embedded(provider)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, m := range models {
			if effort := m.ReasoningEffort(provider, "high"); effort != "" {
				if effort != "high" {
					t.Errorf("%s %s: thinking_mode high sends effort %q", provider, m.Name, effort)
				}
				got = append(got, m.Name)
			}
		}
		if diff := cmp.Diff(want[provider], got); diff != "" {
			t.Errorf("%s: models that take a reasoning effort (-want +got):\n%s", provider, diff)
		}
	}
}

// The OpenAI reasoning models say their own default effort, so they take
// one at any OpenAI-compatible provider (DIAL too), not only where the
// provider's name implies it.
func TestOpenAIReasoningModelsDeclareADefaultEffort(t *testing.T) {
	t.Parallel()
	for _, provider := range []string{"openai", "openrouter", "dial"} {
		models, err := Embedded(provider)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range models {
			if isOpenAIReasoning(m.Name) && (m.DefaultReasoningEffort == "" || !m.SupportsExtendedThinking) {
				t.Errorf("%s %s: default_reasoning_effort %q, supports_extended_thinking %v; want an effort and thinking",
					provider, m.Name, m.DefaultReasoningEffort, m.SupportsExtendedThinking)
			}
		}
	}
}

// isOpenAIReasoning tells OpenAI's reasoning families (o1, o3, o4, gpt-5)
// by name, with or without a vendor prefix or a DIAL date suffix.
func isOpenAIReasoning(name string) bool {
	name = name[strings.LastIndexByte(name, '/')+1:]
	for _, family := range []string{"o1", "o3", "o4", "gpt-5"} {
		if name == family || strings.HasPrefix(name, family+"-") || strings.HasPrefix(name, family+".") {
			return true
		}
	}
	return false
}

func TestThinkingModeMapsToAnEffort(t *testing.T) {
	t.Parallel()
	o3 := Model{Name: "o3", SupportsExtendedThinking: true, DefaultReasoningEffort: "medium"}
	gpt41 := Model{Name: "gpt-4.1"}
	tests := []struct {
		model          Model
		provider, mode string
		want           string
	}{
		{o3, "openai", "minimal", "low"}, {o3, "openai", "low", "low"}, {o3, "openai", "medium", "medium"},
		{o3, "openai", "high", "high"}, {o3, "openai", "max", "high"}, {o3, "openai", "", "medium"},
		{o3, "dial", "high", "high"}, {o3, "custom", "high", "high"},
		{gpt41, "openai", "high", ""},
		// A thinking model with no effort of its own takes one where the
		// API translates it, and no default when no mode is asked.
		{Model{Name: "anthropic/claude-opus-4.5", SupportsExtendedThinking: true}, "openrouter", "low", "low"},
		{Model{Name: "anthropic/claude-opus-4.5", SupportsExtendedThinking: true}, "openrouter", "", ""},
		{Model{Name: "grok-4", SupportsExtendedThinking: true}, "xai", "high", ""},
		{Model{Name: "gemini-2.5-pro", SupportsExtendedThinking: true}, "gemini", "high", ""},
	}
	for _, tt := range tests {
		if got := tt.model.ReasoningEffort(tt.provider, tt.mode); got != tt.want {
			t.Errorf("%s at %s, thinking_mode %q: effort %q, want %q", tt.model.Name, tt.provider, tt.mode, got, tt.want)
		}
	}
}
