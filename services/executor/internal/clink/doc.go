// Package clink runs other AI command-line tools (gemini, codex, claude)
// for the clink tool: their configurations, the subprocess with its
// timeout and process-tree kill, and the parsers of their output formats.
package clink
