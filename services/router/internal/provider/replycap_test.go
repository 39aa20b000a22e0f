package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestRepliesPastTheOutputLimitAreCutOff: a reply far larger than the
// model's output limit allows is cut off with an error saying so, whether
// it streams in one piece, in many, or comes whole; it is not retried (the
// same request would bring the same flood), and a reply within the limit
// passes.
func TestRepliesPastTheOutputLimitAreCutOff(t *testing.T) {
	t.Parallel()
	const cutOff = "the reply was cut off past 256 KiB: more than the model's output limit of 1000 tokens allows " +
		"(with a wide margin). Ask for a shorter answer, or split the work into smaller requests"
	oneBlock := strings.Repeat("x", 10<<20)                          // one stream event
	manyPieces := strings.Repeat(strings.Repeat("y", 999)+" ", 1500) // 1,500 events
	fits := strings.Repeat("z", 100<<10)
	type outcome struct {
		Content   int // length of what came back
		Msg       string
		Retryable bool
	}
	tests := []struct {
		name    string
		gemini  bool
		stream  bool
		content string
		want    outcome
	}{
		{"chat completion, whole", false, false, oneBlock, outcome{Msg: cutOff}},
		{"chat completion, one huge event", false, true, oneBlock, outcome{Msg: cutOff}},
		{"chat completion, many events", false, true, manyPieces, outcome{Msg: cutOff}},
		{"chat completion within the limit", false, true, fits, outcome{Content: len(fits)}},
		{"gemini, whole", true, false, oneBlock, outcome{Msg: cutOff}},
		{"gemini, many events", true, true, manyPieces, outcome{Msg: cutOff}},
		{"gemini within the limit", true, false, fits, outcome{Content: len(fits)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: tt.content} })
			var g Generator = NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
			if tt.gemini {
				gemini, err := NewGemini(context.Background(), fake.GeminiURL(), "k", NewHTTPClient(5*time.Second))
				if err != nil {
					t.Fatal(err)
				}
				g = gemini
			}
			res, _, err := ask(t, g, Request{Model: "m", Stream: tt.stream, MaxTokens: 1000})
			got := outcome{Content: len(res.Content)}
			var perr *Error
			if errors.As(err, &perr) {
				got.Msg, got.Retryable = perr.Msg, perr.Retryable
			} else if err != nil {
				got.Msg = "not a provider error: " + err.Error()
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// TestTheModelsOutputLimitBoundsACallThatSetsNone: without max tokens in
// the call, the catalogue's output limit for the model sets the bound.
func TestTheModelsOutputLimitBoundsACallThatSetsNone(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: strings.Repeat("x", 1<<20)} })
	g := NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
	_, _, err := ask(t, g, Request{Model: "m", MaxOutputTokens: 32_000})
	want := "Custom API error for model m: the reply was cut off past 500 KiB: more than the model's output " +
		"limit of 32000 tokens allows (with a wide margin). Ask for a shorter answer, or split the work into " +
		"smaller requests"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	if body := string(fake.Requests()[0].Body); strings.Contains(body, "max_") {
		t.Errorf("the bound was sent to the provider as a token limit: %s", body)
	}
}
