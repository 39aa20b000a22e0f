package mcpserver

import (
	"context"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/edge/internal/call"
	"github.com/zenmcp/zen/services/platform/modelrule"
)

// slashCommand is an MCP prompt: a shortcut a client shows as a slash
// command, which hands the agent an instruction to call a tool.
type slashCommand struct {
	name, tool, title, template string
}

// slashCommands use the reference's names (thinkdeeper, review), so the
// commands users know keep working. {model} and {thinking} are filled from
// the prompt's arguments; only commands whose template has {model} take
// them.
var slashCommands = []slashCommand{
	{"chat", "chat", "Chat with another model",
		"Use zen's chat tool with {model}{thinking} to discuss this with another model and bring back its view."},
	{"clink", "clink", "Ask another AI CLI",
		"Use zen's clink tool to hand this request to another AI command-line agent and report its answer."},
	{"thinkdeeper", "thinkdeep", "Think deeper",
		"Use zen's thinkdeep tool with {model}{thinking}: investigate this step by step, " +
			"then have the expert model challenge your reasoning."},
	{"planner", "planner", "Plan step by step",
		"Use zen's planner tool to break this down into a plan, one step at a time."},
	{"consensus", "consensus", "Consensus",
		"Use zen's consensus tool: ask several models, with different stances, for their verdict on this, " +
			"then synthesize."},
	{"review", "codereview", "Code review",
		"Use zen's codereview tool with {model}{thinking}: review the code step by step, " +
			"then have the expert validate the review."},
	{"precommit", "precommit", "Pre-commit validation",
		"Use zen's precommit tool with {model}{thinking} to validate the current changes before committing."},
	{"debug", "debug", "Debug",
		"Use zen's debug tool with {model}{thinking}: find the root cause step by step, " +
			"then have the expert check your conclusion."},
	{"secaudit", "secaudit", "Security audit",
		"Use zen's secaudit tool with {model}{thinking} to audit this code for security problems."},
	{"docgen", "docgen", "Generate documentation",
		"Use zen's docgen tool to document this code, one file per step."},
	{"analyze", "analyze", "Analyze code",
		"Use zen's analyze tool with {model}{thinking} to analyze this code's architecture and quality."},
	{"refactor", "refactor", "Refactoring analysis",
		"Use zen's refactor tool with {model}{thinking} to find refactoring opportunities."},
	{"tracer", "tracer", "Trace code",
		"Use zen's tracer tool to trace how this code runs or how it connects."},
	{"testgen", "testgen", "Generate tests",
		"Use zen's testgen tool with {model}{thinking} to plan and write tests for this code."},
	{"challenge", "challenge", "Challenge a statement",
		"Use zen's challenge tool on this statement, then reassess it critically."},
	{"apilookup", "apilookup", "Look up API documentation",
		"Use zen's apilookup tool to find current documentation for this."},
	{"listmodels", "listmodels", "List models", "Use zen's listmodels tool to show the available models."},
	{"version", "version", "zen version", "Use zen's version tool to show the server's version and configuration."},
}

// continueCommand picks the last conversation up again.
var continueCommand = slashCommand{"continue", "chat", "Continue the conversation",
	"Continue the previous zen conversation: call zen's chat tool with the continuation_id from the last zen " +
		"answer and the same model, with this as the prompt."}

// addSlashCommands registers the prompts of the tools on offer, and
// continue when chat is one of them. A command the user gives no model
// names the one modelrule says (auto mode: `auto`; else DEFAULT_MODEL).
func addSlashCommands(s *mcp.Server, tools []*call.Tool, models modelrule.Mode) {
	offered := map[string]bool{}
	for _, t := range tools {
		offered[t.GetName()] = true
	}
	for _, c := range append(slashCommands, continueCommand) {
		if !offered[c.tool] {
			continue
		}
		s.AddPrompt(&mcp.Prompt{
			Name: c.name, Title: c.title, Description: c.title + " (zen " + c.tool + " tool)",
			Arguments: c.arguments(models),
		}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			model, thinking := req.Params.Arguments["model"], ""
			if model == "" {
				model = models.PromptDefault()
			}
			// No mode given, none is set: the tool's own default applies
			// (thinkdeep's DEFAULT_THINKING_MODE_THINKDEEP among them).
			if mode := req.Params.Arguments["thinking_mode"]; mode != "" {
				thinking = " (thinking mode " + mode + ")"
			}
			text := strings.NewReplacer("{model}", model, "{thinking}", thinking).Replace(c.template)
			return &mcp.GetPromptResult{Description: c.title, Messages: []*mcp.PromptMessage{
				{Role: "user", Content: &mcp.TextContent{Text: text}},
			}}, nil
		})
	}
}

// arguments are the settings a command passes on to its tool: model and
// thinking mode for the tools that call a model, none for the others.
func (c slashCommand) arguments(models modelrule.Mode) []*mcp.PromptArgument {
	if !strings.Contains(c.template, "{model}") {
		return nil
	}
	def := "high" // every expert's
	switch c.tool {
	case "chat":
		def = "medium on Gemini, the model's own elsewhere"
	case "thinkdeep":
		def = "high, or DEFAULT_THINKING_MODE_THINKDEEP"
	}
	return []*mcp.PromptArgument{
		{Name: "model", Description: models.Rule()},
		{Name: "thinking_mode", Description: "minimal, low, medium, high or max (default: " + def + ")."},
	}
}
