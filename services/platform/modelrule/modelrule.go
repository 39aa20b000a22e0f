package modelrule

import "fmt"

// Auto is the model value that hands the choice to zen.
const Auto = "auto"

// Mode is how calls get their model, as the router reports it.
type Mode struct {
	// Auto is true when the agent chooses: DEFAULT_MODEL is auto or names a
	// model no configured provider serves.
	Auto bool
	// Default is DEFAULT_MODEL, used by calls that name no model when Auto
	// is false.
	Default string
}

// Rule states the rule for the agent: the MCP instructions, listmodels,
// the slash-command prompts' model argument and the README say it in these
// words (the README's auto-mode paragraph quotes the auto-mode rule).
func (m Mode) Rule() string {
	if m.Auto {
		return "Choose a model for each call: the user's, or one from the `model` field's list or `listmodels`; " +
			"`auto`, or leaving `model` out, lets zen pick the best for the tool; a continuation without `model` " +
			"keeps its thread's model."
	}
	return fmt.Sprintf("Calls without `model` use %s, and a continuation keeps its thread's model; pass `model` "+
		"only when the user asks for another, or `auto` to let zen pick the best for the tool.", m.Default)
}

// Field begins the `model` field's description in a tool's schema: the
// rule in short, since tools/list repeats it for every tool. In auto mode
// the list of the best models follows it (see FieldNoModels for when there
// are none), so it ends with a colon.
func (m Mode) Field() string {
	if m.Auto {
		return "The user's model or one of these (`auto` or none: zen picks):"
	}
	return fmt.Sprintf("Default %s; name another only if the user asks, or `auto` (zen picks).", m.Default)
}

// FieldNoModels ends the auto-mode field description when no model is
// available yet.
const FieldNoModels = " none yet: no model provider is configured (see `listmodels`)."

// PromptDefault is the model a slash command names when the user gives
// none: `auto` in auto mode, as the reference's prompts do, else
// DEFAULT_MODEL.
func (m Mode) PromptDefault() string {
	if m.Auto {
		return Auto
	}
	return m.Default
}
