package provider

import (
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestAnAnswerCutAtItsOutputLimitIsToldApart: each wire says in its own
// words that a model stopped at its output limit, streamed or not; the
// answer is whole otherwise.
func TestAnAnswerCutAtItsOutputLimitIsToldApart(t *testing.T) {
	t.Parallel()
	gemini := func(finish string) string {
		return `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"half"}]},"finishReason":"` +
			finish + `"}]}` + "\n\n"
	}
	responses := func(event, status, reason string) string {
		details := "null"
		if reason != "" {
			details = `{"reason":"` + reason + `"}`
		}
		return `data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,` +
			`"content_index":0,"delta":"half"}` + "\n\n" +
			`data: {"type":"` + event + `","sequence_number":2,"response":{"id":"r","object":"response",` +
			`"status":"` + status + `","incomplete_details":` + details + `,"output":[],` +
			`"usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11}}}` + "\n\n"
	}
	for _, tt := range []struct {
		name, body      string
		wire            string // compat, gemini or responses
		stream, atLimit bool
	}{
		{name: "compat, length", body: sse("half", "length", 0, 0) + "data: [DONE]\n\n", wire: "compat",
			stream: true, atLimit: true},
		{name: "compat, stop", body: sse("half", "stop", 0, 0) + "data: [DONE]\n\n", wire: "compat", stream: true},
		{name: "compat, length, not streamed", wire: "compat", atLimit: true, body: `{"id":"c","object":` +
			`"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"half"},` +
			`"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":2,"total_tokens":11}}`},
		{name: "gemini, MAX_TOKENS", body: gemini("MAX_TOKENS"), wire: "gemini", stream: true, atLimit: true},
		{name: "gemini, STOP", body: gemini("STOP"), wire: "gemini", stream: true},
		{name: "responses, incomplete", body: responses("response.incomplete", "incomplete", "max_output_tokens"),
			wire: "responses", stream: true, atLimit: true},
		{name: "responses, completed", body: responses("response.completed", "completed", ""), wire: "responses",
			stream: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			kind := "application/json"
			if tt.stream {
				kind = "text/event-stream"
			}
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
				return fakemodel.Reply{Raw: tt.body, ContentType: kind}
			})
			var g Generator = NewCompat("OpenAI", fake.URL(), "k", NewHTTPClient(5*time.Second))
			if tt.wire == "gemini" {
				var err error
				if g, err = NewGemini(t.Context(), fake.GeminiURL(), "k", NewHTTPClient(5*time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			res, _, err := ask(t, g, Request{Model: "m", Stream: tt.stream, Responses: tt.wire == "responses"})
			if err != nil {
				t.Fatal(err)
			}
			if got := AtOutputLimit(res.FinishReason); got != tt.atLimit || res.Content != "half" {
				t.Errorf("%q, finish reason %q: at the output limit %v, want %v", res.Content, res.FinishReason, got,
					tt.atLimit)
			}
		})
	}
}
