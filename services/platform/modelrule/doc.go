// Package modelrule owns the one rule for a tool call's `model` argument,
// and its wording, so that every place that states it says the same: the
// tool schemas and listmodels (executor), the MCP instructions and the
// slash-command prompts (edge). The README's "Choosing the model" section
// quotes the auto-mode rule.
//
// In auto mode (DEFAULT_MODEL=auto, the default, or a DEFAULT_MODEL no
// configured provider serves) the agent chooses a model for each call: the
// user's, or one from the schema's list or listmodels. `auto`, or leaving
// `model` out, lets zen pick the best model for the tool's category, so the
// schemas never list `model` as required. With DEFAULT_MODEL naming a
// served model, calls without `model` use it. Either way a continuation
// that names no model keeps its thread's model.
package modelrule
