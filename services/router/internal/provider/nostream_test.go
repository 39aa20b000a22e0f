package provider

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// streamFlags says, for each request the fake received, whether it asked
// to stream.
func streamFlags(fake *fakemodel.Server) []bool {
	var out []bool
	for _, r := range fake.Requests() {
		out = append(out, r.Stream)
	}
	return out
}

// TestServersThatDoNotStream: a server that answers a streaming request
// with a whole JSON completion, or refuses to stream, still answers every
// call; the provider remembers, per model, to stop asking it to stream.
func TestServersThatDoNotStream(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		reply fakemodel.Reply
		// want is whether each request asked to stream, for calls to model
		// a, a again, b, then a from another provider on the same server.
		want []bool
	}{
		{"JSON to a stream request", fakemodel.Reply{IgnoreStream: true},
			[]bool{true, false, true, true}},
		{"JSON labelled text/plain", fakemodel.Reply{IgnoreStream: true, ContentType: "text/plain"},
			[]bool{true, false, true, true}},
		{"streaming refused with a 400", fakemodel.Reply{RefuseStream: true},
			[]bool{true, false, false, true, false, true, false}},
		{"stream_options refused with a 400", fakemodel.Reply{RefuseStream: true,
			Message: "Unrecognized request argument supplied: stream_options"},
			[]bool{true, false, false, true, false, true, false}},
		{"a stream labelled text/plain is still a stream", fakemodel.Reply{ContentType: "text/plain"},
			[]bool{true, true, true, true}},
		{"a server that streams", fakemodel.Reply{}, []bool{true, true, true, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
				rep := tt.reply
				rep.Content, rep.PromptTokens, rep.CompletionTokens = "a whole answer", 7, 3
				return rep
			})
			c := NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
			other := NewCompat("OpenRouter", fake.URL(), "k", NewHTTPClient(5*time.Second))
			want := Result{Content: "a whole answer", FinishReason: "stop", Usage: Usage{InputTokens: 7, OutputTokens: 3}}
			for i, call := range []struct {
				g     Generator
				model string
			}{{c, "a"}, {c, "a"}, {c, "b"}, {other, "a"}} {
				res, deltas, err := ask(t, call.g, Request{Model: call.model, Stream: true})
				if err != nil {
					t.Fatalf("call %d: %v", i, err)
				}
				if diff := cmp.Diff(want, res); diff != "" {
					t.Errorf("call %d (-want +got):\n%s", i, diff)
				}
				if deltas != want.Content {
					t.Errorf("call %d: deltas %q, want the whole answer", i, deltas)
				}
			}
			if diff := cmp.Diff(tt.want, streamFlags(fake)); diff != "" {
				t.Errorf("requests asked to stream (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAzureStyleClientsReadJSONToo: the deployment-URL client (Azure
// OpenAI, DIAL) has the same fallback.
func TestAzureStyleClientsReadJSONToo(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "from a deployment", IgnoreStream: true}
	})
	c := NewCompatWith("DIAL", strings.TrimSuffix(fake.URL(), "/v1"), "dial-key", NewHTTPClient(5*time.Second),
		CompatOptions{APIVersion: "2024-12-01-preview", Deployment: func(m string) string { return m }})
	for range 2 {
		res, _, err := ask(t, c, Request{Model: "gpt-4o", Stream: true})
		if err != nil || res.Content != "from a deployment" {
			t.Fatalf("res %+v, err %v", res, err)
		}
	}
	if diff := cmp.Diff([]bool{true, false}, streamFlags(fake)); diff != "" {
		t.Errorf("requests asked to stream (-want +got):\n%s", diff)
	}
}

// TestOnlyARefusalOfStreamingIsRetriedWithoutIt: a 400 about something
// else is the request's fault, and asking again without streaming would
// only be refused again.
func TestOnlyARefusalOfStreamingIsRetriedWithoutIt(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Status: 400, Message: "model 'a' is not loaded"}
	})
	c := NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
	_, _, err := ask(t, c, Request{Model: "a", Stream: true})
	if err == nil || !strings.Contains(err.Error(), "model 'a' is not loaded") {
		t.Fatalf("err = %v", err)
	}
	if diff := cmp.Diff([]bool{true}, streamFlags(fake)); diff != "" {
		t.Errorf("requests asked to stream (-want +got):\n%s", diff)
	}
}

// TestARefusalIsRememberedOnlyOnceTheCallWithoutStreamingWorks: when the
// retry without streaming fails too, nothing is learnt, and the next call
// asks to stream again.
func TestARefusalIsRememberedOnlyOnceTheCallWithoutStreamingWorks(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	var mu sync.Mutex
	down := true
	fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		mu.Lock()
		defer mu.Unlock()
		if !r.Stream && down {
			down = false
			return fakemodel.Reply{Status: 503}
		}
		return fakemodel.Reply{Content: "ok", RefuseStream: true}
	})
	c := NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
	if _, _, err := ask(t, c, Request{Model: "a", Stream: true}); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("first call: err = %v, want the 503 of the call without streaming", err)
	}
	for range 2 {
		if res, _, err := ask(t, c, Request{Model: "a", Stream: true}); err != nil || res.Content != "ok" {
			t.Fatalf("res %+v, err %v", res, err)
		}
	}
	if diff := cmp.Diff([]bool{true, false, true, false, false}, streamFlags(fake)); diff != "" {
		t.Errorf("requests asked to stream (-want +got):\n%s", diff)
	}
}

// TestConcurrentCallsLearnOnce: calls racing to the same model all succeed,
// and once they are done no call asks to stream. Run with -race.
func TestConcurrentCallsLearnOnce(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "ok", RefuseStream: true} })
	c := NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := c.Generate(context.Background(), Request{Model: "a", Stream: true,
				Messages: []Message{{Role: "user", Content: "hi"}}}, nil)
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	before := len(fake.Requests())
	if _, _, err := ask(t, c, Request{Model: "a", Stream: true}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]bool{false}, streamFlags(fake)[before:]); diff != "" {
		t.Errorf("the call after the race asked to stream (-want +got):\n%s", diff)
	}
}

// TestAnEmptyJSONReplyToAStreamRequestSaysSo: a JSON answer that is not a
// completion is reported as such, not as a broken stream.
func TestAnEmptyJSONReplyToAStreamRequestSaysSo(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Raw: `{"choices": []}`} })
	c := NewCompat("Custom API", fake.URL(), "k", NewHTTPClient(5*time.Second))
	_, _, err := ask(t, c, Request{Model: "a", Stream: true})
	if err == nil || !strings.Contains(err.Error(), "the response had no choices") {
		t.Fatalf("err = %v", err)
	}
}
