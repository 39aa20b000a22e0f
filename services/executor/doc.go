// Package executor is the zen executor service module: the tool catalogue,
// system prompts, rendering of conversation history, and running a tool
// against a model through the router. The binary wires it through the
// server package.
package executor
