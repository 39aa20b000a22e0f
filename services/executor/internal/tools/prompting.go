package tools

import (
	"context"
	"strings"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/executor/internal/prompts"
)

// challenge and apilookup shape the agent's own next move; neither calls a
// model.

func challengeTool() Tool {
	return Tool{
		Name: "challenge", Title: "Challenge a statement",
		Description: "Use automatically when the user disagrees with you or questions your answer (\"are you sure?\", " +
			"\"I think that's wrong\"): it makes you re-examine the point critically instead of simply agreeing.",
		Category: FastResponse, ReadOnly: true,
		Schema: func(Catalog) map[string]any {
			return object(map[string]any{"prompt": str("The user's statement or objection, as they put it.")}, "prompt")
		},
		Output: statusSchema("original_statement", "challenge_prompt", "instructions"),
		Run: func(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
			statement := strArg(c.Args, "prompt")
			return &executorv1.ToolResult{Payload: payload(map[string]any{
				"status": "challenge_accepted", "original_statement": statement,
				"challenge_prompt": strings.ReplaceAll(prompts.Text("challenge"), "{statement}", statement),
				"instructions":     "Reassess the statement on its merits before you answer; agree only where the evidence supports it.",
			})}, nil
		},
	}
}

func apilookupTool() Tool {
	return Tool{
		Name: "apilookup", Title: "Look up current API documentation",
		Description: "Use when you need current documentation for an API, SDK or library version: it tells you how to " +
			"look it up on the web now rather than rely on what you remember.",
		Category: FastResponse, ReadOnly: true,
		Schema: func(Catalog) map[string]any {
			// As in the reference, this schema accepts extra properties.
			return map[string]any{"type": "object", "properties": map[string]any{
				"prompt": str("What to look up: the library, API or feature, and the version if known."),
			}, "required": []any{"prompt"}}
		},
		Output: statusSchema("instructions", "user_prompt"),
		Run: func(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
			return &executorv1.ToolResult{Payload: payload(map[string]any{
				"status": "web_lookup_needed", "instructions": prompts.Text("apilookup"), "user_prompt": strArg(c.Args, "prompt"),
			})}, nil
		},
	}
}

// statusSchema describes a result of a status and the given strings;
// errors carry the status alone with their content.
func statusSchema(fields ...string) map[string]any {
	props := map[string]any{"status": map[string]any{"type": "string"}}
	for _, f := range fields {
		props[f] = map[string]any{"type": "string"}
	}
	return map[string]any{"type": "object", "properties": props, "required": []any{"status"}}
}
