package dispatch

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
)

const secretKey = "sk-test-0123456789abcdef"

// both serve gpt-5, so one can stand in for the other.
const twinCatalogue = `{"models":[{"model_name":"gpt-5","context_window":400000}]}`

type harness struct {
	format  string
	d       *Dispatcher
	reg     *routing.Registry
	primary *fakemodel.Server
	backup  *fakemodel.Server
	mu      sync.Mutex
	waits   []time.Duration
}

// wireFormats are the protocols the primary provider may speak.
var wireFormats = []string{"chat", "responses", "gemini"}

// newHarness routes gpt-5 to primary first (speaking the "chat"
// completions, "responses" or "gemini" wire format) and to backup (an
// OpenAI-compatible "custom" endpoint) second.
func newHarness(t *testing.T, p Policy, format string) *harness {
	h := &harness{primary: fakemodel.New(t), backup: fakemodel.New(t), format: format}
	models, err := catalogue.Parse("twin", []byte(twinCatalogue))
	if err != nil {
		t.Fatal(err)
	}
	hc := provider.NewHTTPClient(5 * time.Second)
	var primary provider.Generator = provider.NewCompat("OpenAI", h.primary.URL(), secretKey, hc)
	label := "OpenAI"
	if format == "gemini" {
		if primary, err = provider.NewGemini(context.Background(), h.primary.GeminiURL(), secretKey, hc); err != nil {
			t.Fatal(err)
		}
		label = "Gemini"
	}
	reg, err := routing.New([]*routing.Provider{
		{Name: "openai", Label: label, Configured: true, Models: models, Client: primary},
		{Name: "custom", Label: "Custom API", Configured: true, Models: models, Client: provider.NewCompat("Custom API", h.backup.URL(), "", hc)},
	}, "auto")
	if err != nil {
		t.Fatal(err)
	}
	h.reg = reg
	q := quiet()
	h.d = New(reg, p, q.logger, q.in)
	h.d.sleep = func(ctx context.Context, d time.Duration) error {
		h.mu.Lock()
		h.waits = append(h.waits, d)
		h.mu.Unlock()
		return ctx.Err()
	}
	return h
}

var testPolicy = Policy{Attempts: 4, BaseDelay: 100 * time.Millisecond, MaxDelay: 2 * time.Second, Deadline: 10 * time.Second,
	IdleTimeout: 2 * time.Second, CooldownAfter: 3, Cooldown: time.Minute}

func (h *harness) generate(t *testing.T) (Outcome, error) {
	t.Helper()
	e, _, err := h.reg.Resolve("gpt-5", "")
	if err != nil {
		t.Fatal(err)
	}
	return h.d.Generate(context.Background(), e, func(e routing.Entry) provider.Request {
		return provider.Request{Model: e.Name, Stream: true, Responses: h.format == "responses" && e.Provider.Name == "openai",
			Messages: []provider.Message{{Role: "user", Content: "hi"}}}
	}, nil)
}

// sequence answers request i with replies[i], and the last one after that.
func sequence(replies ...fakemodel.Reply) func(fakemodel.Request) fakemodel.Reply {
	var mu sync.Mutex
	n := 0
	return func(fakemodel.Request) fakemodel.Reply {
		mu.Lock()
		defer mu.Unlock()
		r := replies[min(n, len(replies)-1)]
		n++
		return r
	}
}

func TestRetriesThatSucceed(t *testing.T) {
	ok := fakemodel.Reply{Content: "recovered"}
	tests := []struct {
		name     string
		first    fakemodel.Reply
		attempts int
		wait     func(time.Duration) bool
	}{
		{"429 with Retry-After", fakemodel.Reply{Status: 429, RetryAfter: "1.5"}, 2, func(d time.Duration) bool { return d == 1500*time.Millisecond }},
		{"429 without Retry-After", fakemodel.Reply{Status: 429}, 2, func(d time.Duration) bool { return d > 0 && d <= 100*time.Millisecond }},
		{"Retry-After beyond the cap", fakemodel.Reply{Status: 429, RetryAfter: "3600"}, 2, func(d time.Duration) bool { return d == 2*time.Second }},
		{"500", fakemodel.Reply{Status: 500}, 2, func(d time.Duration) bool { return d > 0 }},
		{"503", fakemodel.Reply{Status: 503}, 2, func(d time.Duration) bool { return d > 0 }},
		{"reset mid-stream", fakemodel.Reply{Content: "one two three four", ResetAfter: 2}, 2, func(d time.Duration) bool { return d > 0 }},
		{"empty completion", fakemodel.Reply{Content: ""}, 1, nil},
	}
	for _, format := range wireFormats {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				h := newHarness(t, testPolicy, format)
				h.primary.SetReply(sequence(tt.first, ok))
				out, err := h.generate(t)
				if err != nil {
					t.Fatalf("err = %v", err)
				}
				if out.Content != "recovered" || out.Served.Provider.Name != "openai" || out.Attempts != tt.attempts {
					t.Errorf("outcome = %q from %s after %d attempts, want recovered from openai after %d", out.Content, out.Served.Provider.Name, out.Attempts, tt.attempts)
				}
				if tt.wait != nil && (len(h.waits) != 1 || !tt.wait(h.waits[0])) {
					t.Errorf("waits = %v", h.waits)
				}
				if n := len(h.backup.Requests()); n != 0 {
					t.Errorf("the backup was called %d times", n)
				}
			})
		}
	}
}

func TestClearErrorsWithoutRetry(t *testing.T) {
	safety := map[string]fakemodel.Reply{
		"chat":      {Content: "", FinishReason: "content_filter"},
		"responses": {Content: "", FinishReason: "content_filter"},
		"gemini":    {Blocked: "SAFETY"},
	}
	for _, format := range wireFormats {
		tests := []struct {
			name  string
			reply fakemodel.Reply
			want  string
		}{
			{"malformed JSON", fakemodel.Reply{Raw: "{\"choices\": [oops"}, "API error for model gpt-5: the provider's response could not be read"},
			{"safety block", safety[format], "content safety policy"},
			{"empty twice", fakemodel.Reply{Content: "", FinishReason: "length"}, "Response blocked or incomplete. Finish reason: length"},
			{"bad request", fakemodel.Reply{Status: 400}, "HTTP 400"},
		}
		for _, tt := range tests {
			if format == "gemini" && tt.name == "empty twice" {
				tt.reply.FinishReason = "MAX_TOKENS"
				tt.want = "Finish reason: MAX_TOKENS"
			}
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				h := newHarness(t, testPolicy, format)
				h.primary.SetReply(func(fakemodel.Request) fakemodel.Reply { return tt.reply })
				_, err := h.generate(t)
				var f *Failed
				if !errors.As(err, &f) || f.Retryable() || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("err = %v, want a final error containing %q", err, tt.want)
				}
				if len(h.waits) != 0 || len(h.backup.Requests()) != 0 {
					t.Errorf("a request the provider refused on its merits was retried (%v) or sent elsewhere", h.waits)
				}
			})
		}
	}
}

func TestFailingProviderFallsBackThenCoolsDown(t *testing.T) {
	h := newHarness(t, testPolicy, "chat")
	h.primary.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Status: 503} })
	h.backup.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "from the backup"} })
	for call := 1; call <= 4; call++ {
		before := len(h.primary.Requests())
		out, err := h.generate(t)
		if err != nil || out.Content != "from the backup" || out.Served.Provider.Name != "custom" {
			t.Fatalf("call %d: %v %+v", call, err, out)
		}
		tried := len(h.primary.Requests()) - before
		if call <= 3 && tried != 4 {
			t.Errorf("call %d tried the failing provider %d times, want 4", call, tried)
		}
		if call == 4 && tried != 0 {
			t.Errorf("call 4 tried the provider cooling down %d times, want 0", tried)
		}
	}
}

func TestAStalledStreamEndsAtTheIdleTimeout(t *testing.T) {
	p := testPolicy
	p.IdleTimeout = 200 * time.Millisecond
	for _, format := range wireFormats {
		t.Run(format, func(t *testing.T) {
			h := newHarness(t, p, format)
			h.primary.SetReply(sequence(fakemodel.Reply{Stall: true}, fakemodel.Reply{Content: "after the stall"}))
			out, err := h.generate(t)
			if err != nil || out.Content != "after the stall" || out.Attempts != 2 {
				t.Fatalf("%v %+v", err, out)
			}
			h.primary.WaitCancelled(t, 0)
		})
	}
}

func TestNothingRunsPastTheDeadline(t *testing.T) {
	p := testPolicy
	p.Deadline, p.IdleTimeout = 300*time.Millisecond, time.Hour
	h := newHarness(t, p, "gemini")
	h.primary.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Stall: true} })
	start := time.Now()
	_, err := h.generate(t)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want DeadlineExceeded", err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the call took %v, far past its 300ms deadline", elapsed)
	}
}

func TestKeysNeverReachErrors(t *testing.T) {
	for _, format := range wireFormats {
		h := newHarness(t, testPolicy, format)
		h.primary.SetReply(func(fakemodel.Request) fakemodel.Reply {
			return fakemodel.Reply{Status: 401, Message: "Incorrect API key provided: " + secretKey}
		})
		_, err := h.generate(t)
		if err == nil || strings.Contains(err.Error(), secretKey) || !strings.Contains(err.Error(), "[REDACTED]") {
			t.Errorf("%s: err = %v", format, err)
		}
	}
}

// TestAStreamThatIsBusyWithoutTextIsNotIdle: the idle timeout counted the
// answer's text alone, so a reasoning model streaming its reasoning, or a
// provider sending keep-alive comments (OpenRouter's ": OPENROUTER
// PROCESSING") while it works, was cut as silent and asked again, each
// attempt paid for, until the attempts ran out. Any bytes count now.
func TestAStreamThatIsBusyWithoutTextIsNotIdle(t *testing.T) {
	p := testPolicy
	p.IdleTimeout = 300 * time.Millisecond
	reasoning := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":` +
		`{"reasoning_content":"thinking"}}]}` + "\n\n"
	answer := `data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"done"},` +
		`"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	for name, busy := range map[string]string{"reasoning": reasoning, "comments": ": OPENROUTER PROCESSING\n\n"} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, p, "chat")
			pieces := []string{busy, busy, busy, busy, busy, busy, answer} // 1.05 s in all, 150 ms apart
			h.primary.SetReply(func(fakemodel.Request) fakemodel.Reply {
				return fakemodel.Reply{RawPieces: pieces, PieceDelay: 150 * time.Millisecond}
			})
			out, err := h.generate(t)
			if err != nil || out.Content != "done" || out.Attempts != 1 || len(h.primary.Requests()) != 1 {
				t.Fatalf("%v %+v, %d requests; want the answer at the first attempt", err, out,
					len(h.primary.Requests()))
			}
		})
	}
}

// TestAnEmptyReplyIsAskedAgainForASubstantiveOne: an empty reply is asked
// for once more, as the reference asks Gemini, with its words added: "please
// provide a substantive response". The same request again came back empty
// as often as not.
func TestAnEmptyReplyIsAskedAgainForASubstantiveOne(t *testing.T) {
	for _, format := range wireFormats {
		t.Run(format, func(t *testing.T) {
			h := newHarness(t, testPolicy, format)
			h.primary.SetReply(sequence(fakemodel.Reply{Content: ""}, fakemodel.Reply{Content: "recovered"}))
			if out, err := h.generate(t); err != nil || out.Content != "recovered" {
				t.Fatalf("%v %+v", err, out)
			}
			reqs := h.primary.Requests()
			if len(reqs) != 2 || strings.Contains(reqs[0].AllText(), "substantive") ||
				!strings.Contains(reqs[1].AllText(), "Please provide a substantive response") {
				t.Errorf("%d requests; want the second alone to ask for a substantive response", len(reqs))
			}
		})
	}
	// A reply a filter blocked is not asked for again: it would be blocked
	// again, and paid for.
	h := newHarness(t, testPolicy, "chat")
	h.primary.SetReply(sequence(fakemodel.Reply{Content: "", FinishReason: "content_filter"},
		fakemodel.Reply{Content: "recovered"}))
	if _, err := h.generate(t); err == nil || len(h.primary.Requests()) != 1 {
		t.Errorf("a blocked reply: %v, %d requests; want the block reported after one", err,
			len(h.primary.Requests()))
	}
}
