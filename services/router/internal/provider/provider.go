package provider

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Message is one chat message.
type Message struct {
	Role    string // system, user or assistant
	Content string
	Images  []string // data URLs
}

// Request is one generation.
type Request struct {
	Model       string // the name the provider knows
	Messages    []Message
	Temperature *float64 // nil leaves it out of the request
	MaxTokens   int64    // 0 leaves it out
	Stream      bool
	// MaxOutputTokens is the model's output limit (its catalogue's
	// max_output_tokens), which bounds the reply read (see capReply).
	MaxOutputTokens int64
	// ThinkingBudget, for Gemini, is how many tokens the model may think.
	ThinkingBudget *int32
	// ReasoningEffort, for OpenAI reasoning models: low, medium or high.
	ReasoningEffort string
	// Responses sends the call to OpenAI's responses API (/v1/responses),
	// which some models (the -pro and -codex ones) require.
	Responses bool
}

// Usage counts tokens.
type Usage struct {
	InputTokens, OutputTokens int64
}

// Result is a finished generation.
type Result struct {
	Content      string
	FinishReason string
	Usage        Usage
}

// Error is a failed provider call, worded for the person who reads it.
type Error struct {
	Provider   string
	Model      string
	Status     int           // HTTP status, 0 when none came back
	Retryable  bool          // a later attempt may succeed
	RetryAfter time.Duration // what the provider asked us to wait, if it said
	Fault      Fault         // whom the failure is about: the model, the provider, the request
	Msg        string
}

func (e *Error) Error() string {
	// "Custom API" is already an API: "Custom API error", not "Custom API API error".
	return fmt.Sprintf("%s API error for model %s: %s", strings.TrimSuffix(e.Provider, " API"), e.Model, e.Msg)
}

// ErrEmpty is a reply with no text.
var ErrEmpty = errors.New("empty response")

// Generator is a provider client. OnDelta, when set, gets each piece of the
// reply as it streams.
type Generator interface {
	Generate(ctx context.Context, req Request, onDelta func(string)) (Result, error)
}

// AtOutputLimit reports whether a generation that finished for reason (a
// Result's FinishReason, in its wire's words) stopped at the model's
// output limit, before its answer was done: "length" on OpenAI's chat
// completions and the APIs like it, Gemini's MAX_TOKENS, the responses
// API's max_output_tokens, and Anthropic's max_tokens as some proxies pass
// it on.
func AtOutputLimit(reason string) bool {
	switch reason {
	case "length", "MAX_TOKENS", "max_output_tokens", "max_tokens":
		return true
	}
	return false
}
