// Package fakemodel is a real HTTP server that speaks the OpenAI chat
// completions wire format, streaming and not, for tests. It records every
// request so a test can check what zen sent upstream, counts the
// connections it accepts, and it can be told to fail, stall until the
// caller gives up, answer garbage, or act as servers that do not stream do.
package fakemodel
