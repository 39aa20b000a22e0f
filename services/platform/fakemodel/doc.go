// Package fakemodel is a real HTTP server that speaks the OpenAI chat
// completions wire format, streaming and not, for tests. It records every
// request so a test can check what zen sent upstream, and it can be told to
// fail, stall until the caller gives up, or answer garbage.
package fakemodel
