package tools

import (
	"context"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/executor/internal/prompts"
	"github.com/zenmcp/zen/services/platform/reply"
)

// challenge and apilookup shape the agent's own next move; neither calls a
// model.

func challengeTool() Tool {
	return Tool{
		Name: "challenge", Title: "Challenge a statement",
		Description: "Use automatically when the user pushes back (\"are you sure?\", \"that's wrong\"): you " +
			"re-examine the point critically instead of simply agreeing.",
		Category: FastResponse, ReadOnly: true,
		Schema: func(Catalog) *jsonschema.Schema {
			return object(map[string]*jsonschema.Schema{"prompt": str("The user's objection, verbatim.")}, "prompt")
		},
		Output: statusSchema("original_statement", "challenge_prompt", "instructions"),
		Run: func(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
			var a promptArgs
			if err := decodeArgs("challenge", c.Args, &a); err != nil {
				return errorResult("challenge", err.Error(), nil), nil
			}
			statement := a.Prompt
			return &executorv1.ToolResult{Reply: (&reply.Reply{Status: "challenge_accepted", Fields: map[string]any{
				"original_statement": statement,
				"challenge_prompt":   strings.ReplaceAll(prompts.Text("challenge"), "{statement}", statement),
				"instructions": "Reassess the statement on its merits before you answer; agree only where the " +
					"evidence supports it.",
			}}).Encode()}, nil
		},
	}
}

func apilookupTool() Tool {
	return Tool{
		Name: "apilookup", Title: "Look up current API documentation",
		Description: "Use when you need current docs for an API, SDK or library version: it tells you how to look " +
			"them up on the web now instead of relying on memory.",
		Category: FastResponse, ReadOnly: true,
		Schema: func(Catalog) *jsonschema.Schema {
			// As in the reference, this schema accepts extra properties.
			return &jsonschema.Schema{Type: "object", Properties: map[string]*jsonschema.Schema{
				"prompt": str("The library, API or feature, and its version if known."),
			}, Required: []string{"prompt"}}
		},
		Output: statusSchema("instructions", "user_prompt"),
		Run: func(_ context.Context, _ *Env, c *Call) (*executorv1.ToolResult, error) {
			var a promptArgs
			if err := decodeArgs("apilookup", c.Args, &a); err != nil {
				return errorResult("apilookup", err.Error(), nil), nil
			}
			return &executorv1.ToolResult{Reply: (&reply.Reply{Status: "web_lookup_needed", Fields: map[string]any{
				"instructions": prompts.Text("apilookup"), "user_prompt": a.Prompt,
			}}).Encode()}, nil
		},
	}
}
