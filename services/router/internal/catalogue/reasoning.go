package catalogue

import "slices"

// effortTranslators are the providers whose API takes an OpenAI-style
// reasoning effort for every model that thinks: OpenAI and Azure serve only
// OpenAI's models, and OpenRouter turns an effort into each vendor's own
// knob (Anthropic's and Gemini's thinking budgets).
var effortTranslators = []string{"openai", "azure", "openrouter"}

// ReasoningEffort is the reasoning effort to send for thinking_mode when
// provider serves m, or "" when the model takes none. A model takes one when
// it names its default effort (what OpenAI's reasoning models do in every
// catalogue, so DIAL's and a Custom server's are covered too), or when it
// thinks at a provider whose API translates an effort. Gemini's models get
// a thinking budget instead, which the router sets itself.
//
// thinking_mode has five steps and an effort three: minimal and low ask
// for low, high and max for high. No mode means the model's default.
func (m Model) ReasoningEffort(provider, mode string) string {
	if m.DefaultReasoningEffort == "" && !(m.SupportsExtendedThinking && slices.Contains(effortTranslators, provider)) {
		return ""
	}
	switch mode {
	case "minimal", "low":
		return "low"
	case "medium":
		return "medium"
	case "high", "max":
		return "high"
	}
	return m.DefaultReasoningEffort
}
