package provider

import "testing"

// TestErrorNamesTheProviderOnce: a provider whose name ends in "API" is not
// called an "API API".
func TestErrorNamesTheProviderOnce(t *testing.T) {
	t.Parallel()
	for label, want := range map[string]string{
		"Custom API": "Custom API error for model m: HTTP 500",
		"OpenAI":     "OpenAI API error for model m: HTTP 500",
		"Gemini":     "Gemini API error for model m: HTTP 500",
	} {
		if got := (&Error{Provider: label, Model: "m", Msg: "HTTP 500"}).Error(); got != want {
			t.Errorf("%s: %q, want %q", label, got, want)
		}
	}
}
