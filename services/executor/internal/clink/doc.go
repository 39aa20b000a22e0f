// Package clink runs other AI command-line tools (gemini, codex, claude)
// for the clink tool: their configurations (sandbox flags included), the
// allow-listed environment each runs with, the subprocess with its timeout
// and process-tree kill, and the parsers of their output formats.
package clink
