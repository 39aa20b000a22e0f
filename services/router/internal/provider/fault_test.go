package provider

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// TestFailuresSayWhomTheyAreAbout: each client's errors carry the scope a
// circuit breaker should give them.
func TestFailuresSayWhomTheyAreAbout(t *testing.T) {
	t.Parallel()
	refusing := fakemodel.RefusingURL(t)
	tests := []struct {
		name  string
		reply fakemodel.Reply
		want  Fault
	}{
		{"401", fakemodel.Reply{Status: http.StatusUnauthorized}, FaultProvider},
		{"403", fakemodel.Reply{Status: http.StatusForbidden}, FaultProvider},
		{"unknown model", fakemodel.Reply{Status: http.StatusNotFound}, FaultModel},
		{"bad request", fakemodel.Reply{Status: http.StatusBadRequest}, FaultRequest},
		{"an image it cannot read", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: "You uploaded an unsupported image. Please make sure your image is valid."}, FaultRequest},
		{"a key refused as a 400 (Gemini)", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: "API key not valid. Please pass a valid API key."}, FaultProvider},
		{"an unknown model as a 400", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: "fake-x is not a valid model ID"}, FaultModel},
		{"an invalid model name as a 400", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: "Invalid model name passed in model=fake-x"}, FaultModel},
		// Providers' own words, verbatim.
		{"Gemini's key not found", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: "API Key not found. Please pass a valid API key."}, FaultProvider},
		{"LiteLLM's unknown model", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: "{'error': '/chat/completions: Invalid model name passed in model=gpt-x. Call `/v1/models` " +
				"to view available models for your key.'}"}, FaultModel},
		// A model's name is the client's to choose (any vendor/model on
		// OpenRouter): words in it are not the provider's.
		{"a 400 naming a model the client named for the key", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: clientsModel + " is not a valid model ID"}, FaultModel},
		{"request too large", fakemodel.Reply{Status: http.StatusRequestEntityTooLarge}, FaultRequest},
		{"unprocessable request", fakemodel.Reply{Status: http.StatusUnprocessableEntity}, FaultRequest},
		{"rate limited", fakemodel.Reply{Status: http.StatusTooManyRequests}, FaultModel},
		{"500", fakemodel.Reply{Status: http.StatusInternalServerError}, FaultModel},
		{"408", fakemodel.Reply{Status: http.StatusRequestTimeout}, FaultTimeout},
		{"504", fakemodel.Reply{Status: http.StatusGatewayTimeout}, FaultTimeout},
		{"reply cut off", fakemodel.Reply{Content: "one two three", ResetAfter: 1}, FaultModel},
	}
	hc := NewHTTPClient(5 * time.Second)
	for _, format := range []string{"chat", "gemini"} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				fake := fakemodel.New(t)
				fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return tt.reply })
				var g Generator = NewCompat("OpenAI", fake.URL(), "k", hc)
				if format == "gemini" {
					g, _ = NewGemini(context.Background(), fake.GeminiURL(), "k", hc)
				}
				if got := faultOf(t, g); got != tt.want {
					t.Errorf("fault = %d, want %d", got, tt.want)
				}
			})
		}
	}
	t.Run("refused connection", func(t *testing.T) {
		t.Parallel()
		if got := faultOf(t, NewCompat("OpenAI", refusing, "k", hc)); got != FaultProvider {
			t.Errorf("fault = %d, want the provider's (%d)", got, FaultProvider)
		}
	})
	t.Run("blocked prompt", func(t *testing.T) {
		t.Parallel()
		fake := fakemodel.New(t)
		fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Blocked: "SAFETY"} })
		g, _ := NewGemini(context.Background(), fake.GeminiURL(), "k", hc)
		if got := faultOf(t, g); got != FaultRequest {
			t.Errorf("fault = %d, want the request's (%d)", got, FaultRequest)
		}
	})
}

// faultOf makes one streamed call that must fail, and returns its fault.
// clientsModel is the model faultOf asks for: a name a client may choose
// (any vendor/model, on OpenRouter), with words a provider's own message
// could hold.
const clientsModel = "vendor/API key not valid"

func faultOf(t *testing.T, g Generator) Fault {
	t.Helper()
	_, _, err := ask(t, g, Request{Model: clientsModel, Stream: true})
	var perr *Error
	if !errors.As(err, &perr) {
		t.Fatalf("err = %v, want a provider error", err)
	}
	return perr.Fault
}
