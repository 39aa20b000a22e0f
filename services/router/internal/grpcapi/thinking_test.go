package grpcapi

import (
	"testing"

	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
)

func TestThinkingModeMapsToEachProvidersKnob(t *testing.T) {
	gemini := &routing.Provider{Name: "gemini"}
	openai := &routing.Provider{Name: "openai"}
	dial := &routing.Provider{Name: "dial"}
	tests := []struct {
		name       string
		entry      routing.Entry
		mode       string
		wantBudget int32 // -1: none
		wantEffort string
	}{
		{"gemini medium", routing.Entry{Model: catalogue.Model{Name: "gemini-2.5-pro", SupportsExtendedThinking: true, MaxThinkingTokens: 32768}, Provider: gemini}, "medium", 10813, ""},
		{"gemini minimal", routing.Entry{Model: catalogue.Model{Name: "gemini-2.5-flash", SupportsExtendedThinking: true, MaxThinkingTokens: 24576}, Provider: gemini}, "minimal", 122, ""},
		{"gemini 3 pro lifts medium to high", routing.Entry{Model: catalogue.Model{Name: "gemini-3-pro-preview", SupportsExtendedThinking: true, MaxThinkingTokens: 32768}, Provider: gemini}, "medium", 21954, ""},
		{"no thinking", routing.Entry{Model: catalogue.Model{Name: "gemini-2.0-flash-lite"}, Provider: gemini}, "high", -1, ""},
		{"openai max", routing.Entry{Model: catalogue.Model{Name: "o3", SupportsExtendedThinking: true}, Provider: openai}, "max", -1, "high"},
		{"openai default", routing.Entry{Model: catalogue.Model{Name: "gpt-5.2", SupportsExtendedThinking: true, DefaultReasoningEffort: "medium"}, Provider: openai}, "", -1, "medium"},
		{"dial o3", routing.Entry{Model: catalogue.Model{Name: "o3-2025-04-16", SupportsExtendedThinking: true,
			DefaultReasoningEffort: "medium"}, Provider: dial}, "high", -1, "high"},
		{"openai gpt-4.1 takes none", routing.Entry{Model: catalogue.Model{Name: "gpt-4.1"}, Provider: openai},
			"high", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req provider.Request
			thinking(&req, tt.mode, tt.entry)
			got := int32(-1)
			if req.ThinkingBudget != nil {
				got = *req.ThinkingBudget
			}
			if got != tt.wantBudget || req.ReasoningEffort != tt.wantEffort {
				t.Errorf("budget %d effort %q, want %d %q", got, req.ReasoningEffort, tt.wantBudget, tt.wantEffort)
			}
		})
	}
}
