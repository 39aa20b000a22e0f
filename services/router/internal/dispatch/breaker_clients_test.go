package dispatch

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
)

// callAs is call by client, whose prompt is prompt.
func (o *oneProvider) callAs(t *testing.T, client, model, prompt string) (Outcome, error) {
	t.Helper()
	e, _, err := o.reg.Resolve(model, "")
	if err != nil {
		t.Fatal(err)
	}
	return o.d.Generate(auth.WithClient(context.Background(), client), e, func(e routing.Entry) provider.Request {
		return provider.Request{Model: e.Name, Stream: true, Messages: []provider.Message{{Role: "user",
			Content: prompt}}}
	}, nil)
}

// poisoned answers a prompt holding "poison" with bad, others well: a
// request of one client's that the provider fails on (an image some
// servers cannot take, a request over the key's rate).
func poisoned(bad fakemodel.Reply) func(fakemodel.Request) fakemodel.Reply {
	return func(r fakemodel.Request) fakemodel.Reply {
		for _, m := range r.Messages {
			if strings.Contains(m.Text(), "poison") {
				return bad
			}
		}
		return fakemodel.Reply{Content: "good answer"}
	}
}

// Failures that one client's calls alone met rest the model, or the
// provider, for that client only: a client whose requests made the
// provider fail (a 5xx, a 429, a key refused) kept every other client
// away from the model for as long as it went on sending them.
func TestOneClientsFailuresRestTheModelForItAlone(t *testing.T) {
	t.Parallel()
	for _, f := range []struct {
		name  string
		reply fakemodel.Reply
	}{
		{"its 500s", fakemodel.Reply{Status: http.StatusInternalServerError}},
		{"its 429s", fakemodel.Reply{Status: http.StatusTooManyRequests}},
		{"its timeouts", fakemodel.Reply{Status: http.StatusGatewayTimeout}},
		{"the key refused", fakemodel.Reply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided"}},
	} {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			o := newOneProvider(t, "chat", "", quiet())
			o.fake.SetReply(poisoned(f.reply))
			for i := range testPolicy.CooldownAfter {
				if _, err := o.callAs(t, "mallory", "fake-good", "poison"); err == nil {
					t.Fatalf("mallory's call %d succeeded", i+1)
				}
			}
			sent := len(o.fake.Requests())
			if _, err := o.callAs(t, "mallory", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
				t.Errorf("mallory after %d failed calls: %v, want the breaker open for it", testPolicy.CooldownAfter,
					err)
			}
			if n := len(o.fake.Requests()) - sent; n != 0 {
				t.Errorf("the breaker open for mallory let %d of its requests through", n)
			}
			out, err := o.callAs(t, "alice", "fake-good", "hi")
			if err != nil || out.Content != "good answer" {
				t.Errorf("alice's call after mallory's failures: %q, %v; want it served", out.Content, err)
			}
		})
	}
}

// Failures that more than one client met are the model's: it rests for
// everyone, as it did before calls were told apart by client.
func TestFailuresOfSeveralClientsRestTheModelForAll(t *testing.T) {
	t.Parallel()
	t.Run("in a row", func(t *testing.T) {
		t.Parallel()
		o := newOneProvider(t, "chat", "", quiet())
		o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusInternalServerError}))
		for i, client := range []string{"alice", "bob", "alice"} {
			if _, err := o.callAs(t, client, "fake-good", "poison"); err == nil {
				t.Fatalf("call %d (%s) succeeded", i+1, client)
			}
		}
		if _, err := o.callAs(t, "carol", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
			t.Errorf("carol after alice's and bob's failures: %v, want the breaker open for all", err)
		}
	})
	t.Run("another client's failure while it rests for one", func(t *testing.T) {
		t.Parallel()
		o := newOneProvider(t, "chat", "", quiet())
		o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusInternalServerError}))
		for range testPolicy.CooldownAfter {
			o.callAs(t, "alice", "fake-good", "poison")
		}
		if _, err := o.callAs(t, "bob", "fake-good", "poison"); err == nil || errors.Is(err, ErrCoolingDown) {
			t.Fatalf("bob's call, the breaker open for alice alone: %v, want it sent and failed", err)
		}
		if _, err := o.callAs(t, "carol", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
			t.Errorf("carol after alice's and bob's failures: %v, want the breaker open for all", err)
		}
	})
	t.Run("without tokens every caller is one client", func(t *testing.T) {
		t.Parallel()
		o := newOneProvider(t, "chat", "", quiet())
		o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusInternalServerError}))
		for range testPolicy.CooldownAfter {
			o.callAs(t, "", "fake-good", "poison")
		}
		if _, err := o.callAs(t, "", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
			t.Errorf("a call after %d failed ones: %v, want the breaker open", testPolicy.CooldownAfter, err)
		}
	})
}
