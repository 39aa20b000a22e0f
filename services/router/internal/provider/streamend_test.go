package provider

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestAStreamThatStopsBeforeItsEndIsNoAnswer: a stream is whole once a
// choice says why it finished or the provider says [DONE]. One whose body
// ends before either (a proxy's timeout, a provider's crash between
// chunks) was taken as the whole answer and stored; it is a dropped reply,
// which may be asked for again.
func TestAStreamThatStopsBeforeItsEndIsNoAnswer(t *testing.T) {
	t.Parallel()
	cut := sse("partial answer that was ", "", 0, 0)
	for _, tt := range []struct {
		name, body string
		want       Result // when whole
	}{
		{"cut between chunks", cut, Result{}},
		{"cut after the usage", cut + sse("", "", 9, 2), Result{}},
		{"finished, no [DONE]", cut + sse("cut", "stop", 0, 0) + sse("", "", 9, 2),
			Result{Content: "partial answer that was cut", FinishReason: "stop", Usage: Usage{InputTokens: 9, OutputTokens: 2}}},
		{"[DONE], no reason", cut + "data: [DONE]\n\n", Result{Content: "partial answer that was "}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
				return fakemodel.Reply{Raw: tt.body, ContentType: "text/event-stream"}
			})
			res, _, err := ask(t, NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second)),
				Request{Model: "m", Stream: true})
			if tt.want.Content == "" {
				var e *Error
				if !errors.As(err, &e) || !e.Retryable || e.Msg != streamCut {
					t.Errorf("got %+v, %v; want a retryable error saying the stream ended early", res, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
}

// TestGeminiAndResponsesStreamsThatStopBeforeTheirEndAreNoAnswer: the same
// for Gemini's stream, whole once a candidate says why it finished, and
// the Responses API's, whole at its completed (or incomplete) event.
func TestGeminiAndResponsesStreamsThatStopBeforeTheirEndAreNoAnswer(t *testing.T) {
	t.Parallel()
	gemini := func(text, finish string) string {
		reason := ""
		if finish != "" {
			reason = `,"finishReason":"` + finish + `"`
		}
		return `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"` + text + `"}]}` + reason + `}]}` +
			"\n\n"
	}
	delta := `data: {"type":"response.output_text.delta","sequence_number":1,"item_id":"m","output_index":0,` +
		`"content_index":0,"delta":"partial answer"}` + "\n\n"
	completed := `data: {"type":"response.completed","sequence_number":2,"response":{"id":"r","object":"response",` +
		`"status":"completed","output":[],"usage":{"input_tokens":9,"output_tokens":2,"total_tokens":11}}}` + "\n\n"
	for _, tt := range []struct {
		name, body string
		responses  bool
		whole      bool
	}{
		{name: "gemini, cut", body: gemini("partial answer", "")},
		{name: "gemini, finished", body: gemini("partial ", "") + gemini("answer", "STOP"), whole: true},
		{name: "responses, cut", body: delta, responses: true},
		{name: "responses, completed", body: delta + completed, responses: true, whole: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
				return fakemodel.Reply{Raw: tt.body, ContentType: "text/event-stream"}
			})
			var g Generator = NewCompat("OpenAI", fake.URL(), "k", NewHTTPClient(5*time.Second))
			if !tt.responses {
				var err error
				if g, err = NewGemini(t.Context(), fake.GeminiURL(), "k", NewHTTPClient(5*time.Second)); err != nil {
					t.Fatal(err)
				}
			}
			res, _, err := ask(t, g, Request{Model: "m", Stream: true, Responses: tt.responses})
			var e *Error
			switch {
			case tt.whole && (err != nil || res.Content != "partial answer"):
				t.Errorf("got %+v, %v; want the whole answer", res, err)
			case !tt.whole && (!errors.As(err, &e) || !e.Retryable || !strings.HasSuffix(e.Msg, streamCut)):
				t.Errorf("got %+v, %v; want a retryable error saying the stream ended early", res, err)
			}
		})
	}
}

// TestAnErrorInTheMiddleOfAStreamNamesNoStatus: an error the provider
// sends in the stream came with no HTTP status of its own, and was told
// as "HTTP 0".
func TestAnErrorInTheMiddleOfAStreamNamesNoStatus(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Raw: sse("Hel", "", 0, 0) + "data: " + overload + "\n\n", ContentType: "text/event-stream"}
	})
	_, _, err := ask(t, NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second)),
		Request{Model: "m", Stream: true})
	var e *Error
	want := "the provider reported an error in the middle of the reply: the model is overloaded"
	if !errors.As(err, &e) || e.Msg != want {
		t.Errorf("got %v; want the provider's message, said to come mid-reply", err)
	}
}
