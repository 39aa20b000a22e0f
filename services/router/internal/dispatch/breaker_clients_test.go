package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/telemetry"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
)

// callAs is call by client, whose prompt is prompt.
func (o *oneProvider) callAs(t *testing.T, client, model, prompt string) (Outcome, error) {
	t.Helper()
	return o.callWithin(t, context.Background(), client, model, prompt)
}

// callWithin is callAs within ctx.
func (o *oneProvider) callWithin(t *testing.T, ctx context.Context, client, model, prompt string) (Outcome, error) {
	t.Helper()
	e, _, err := o.reg.Resolve(model, "")
	if err != nil {
		t.Fatal(err)
	}
	return o.d.Generate(auth.WithClient(ctx, client), e, func(e routing.Entry) provider.Request {
		return provider.Request{Model: e.Name, Stream: true, Messages: []provider.Message{{Role: "user",
			Content: prompt}}}
	}, nil)
}

// restingForAll is a provider whose fake-good rests for every client after
// a blip that alice's and mallory's calls met; the fake now answers
// poisoned prompts with a 500, and the others well.
func restingForAll(t *testing.T) *oneProvider {
	t.Helper()
	o := newOneProvider(t, "chat", "", quiet())
	o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusInternalServerError}))
	for _, client := range []string{"alice", "mallory", "alice"} {
		o.callAs(t, client, "fake-good", "poison")
	}
	return o
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
	for _, c := range []struct {
		name  string
		calls []string // clients whose poisoned calls fail, in order
	}{
		{"in a row", []string{"alice", "bob", "alice"}},
		{"another client's failure while it rests for one", []string{"alice", "alice", "alice", "bob"}},
		{"without tokens every caller is one client", []string{"", "", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			o := newOneProvider(t, "chat", "", quiet())
			o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusInternalServerError}))
			for i, client := range c.calls {
				if _, err := o.callAs(t, client, "fake-good", "poison"); err == nil || errors.Is(err, ErrCoolingDown) {
					t.Fatalf("call %d (%q): %v, want it sent and failed", i+1, client, err)
				}
			}
			if _, err := o.callAs(t, "carol", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
				t.Errorf("carol after %v failed: %v, want the breaker open for all", c.calls, err)
			}
		})
	}
}

// A rest for one client ends only with its cooldown and that client's
// probe: another client's answered calls leave it as it is, and once it is
// over it is forgotten, so another client's failure does not rest the model
// for all on its account.
func TestARestForOneClientRunsItsCourse(t *testing.T) {
	t.Parallel()
	t.Run("others answered meanwhile", func(t *testing.T) {
		t.Parallel()
		o := newOneProvider(t, "chat", "", quiet())
		o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusTooManyRequests}))
		for range testPolicy.CooldownAfter {
			o.callAs(t, "mallory", "fake-good", "poison")
		}
		if out, err := o.callAs(t, "alice", "fake-good", "hi"); err != nil {
			t.Fatalf("alice: %q, %v; want her call answered", out.Content, err)
		}
		sent := len(o.fake.Requests())
		if _, err := o.callAs(t, "mallory", "fake-good", "poison"); !errors.Is(err, ErrCoolingDown) {
			t.Errorf("mallory after alice was answered: %v, want still resting", err)
		}
		if n := len(o.fake.Requests()) - sent; n != 0 {
			t.Errorf("mallory's rest let %d of its requests through", n)
		}
	})
	t.Run("over and forgotten", func(t *testing.T) {
		t.Parallel()
		o := newOneProvider(t, "chat", "", quiet())
		o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusInternalServerError}))
		for range testPolicy.CooldownAfter {
			o.callAs(t, "mallory", "fake-good", "poison")
		}
		o.clock.advance(10 * testPolicy.Cooldown) // mallory never calls again
		if _, err := o.callAs(t, "bob", "fake-good", "poison"); err == nil || errors.Is(err, ErrCoolingDown) {
			t.Fatalf("bob's call: %v, want it sent and failed", err)
		}
		if out, err := o.callAs(t, "carol", "fake-good", "hi"); err != nil {
			t.Errorf("carol after one failure of bob's: %q, %v; want her call answered", out.Content, err)
		}
		if out, err := o.callAs(t, "mallory", "fake-good", "hi"); err != nil {
			t.Errorf("mallory long after its rest: %q, %v; want its call answered", out.Content, err)
		}
	})
}

// A failed probe rests the model again for its own client alone: a client
// that sent a failing call the moment each rest ended, and so was its
// probe, kept a model that had recovered away from everyone.
func TestAFailedProbeRestsItsOwnClient(t *testing.T) {
	t.Parallel()
	o := restingForAll(t)
	if _, err := o.callAs(t, "carol", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
		t.Fatalf("carol during the blip: %v, want the model resting for all", err)
	}
	for round := range 3 {
		o.clock.advance(testPolicy.Cooldown)
		if _, err := o.callAs(t, "mallory", "fake-good", "poison"); err == nil || errors.Is(err, ErrCoolingDown) {
			t.Fatalf("round %d: mallory's probe: %v, want it sent and failed", round, err)
		}
		if out, err := o.callAs(t, "alice", "fake-good", "hi"); err != nil {
			t.Errorf("round %d: alice after mallory's failed probe: %q, %v; want her call answered", round,
				out.Content, err)
		}
	}
}

// A rest for one client is counted apart from one for all, and becomes one
// when another client's call fails: the open gauge moves from one label to
// the other, and the widening counts as an opening.
func TestARestForOneClientIsCountedApart(t *testing.T) {
	t.Parallel()
	reader := sdkmetric.NewManualReader()
	in := telemetry.NewInstrumentsOn(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)).Meter("test"))
	o := newOneProvider(t, "chat", "", observers{slog.New(slog.DiscardHandler), in})
	o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusInternalServerError}))
	for range testPolicy.CooldownAfter {
		o.callAs(t, "mallory", "fake-good", "poison")
	}
	want := map[string]int64{"zen.breaker.opened openai model client": 1, "zen.breaker.open openai model client": 1}
	if diff := cmp.Diff(want, breakerSeries(t, reader)); diff != "" {
		t.Errorf("resting for mallory (-want +got):\n%s", diff)
	}
	o.callAs(t, "bob", "fake-good", "poison")
	want = map[string]int64{
		"zen.breaker.opened openai model client": 1, "zen.breaker.open openai model client": 0,
		"zen.breaker.opened openai model all": 1, "zen.breaker.open openai model all": 1,
	}
	if diff := cmp.Diff(want, breakerSeries(t, reader)); diff != "" {
		t.Errorf("widened by bob's failure (-want +got):\n%s", diff)
	}
}

// A half-open breaker lets one probe of each client through: one client's
// probe that stalled (a request the provider is slow on), or that ended in
// its own refusal and was claimed again at once, held every client back
// for as long as it went on.
func TestAProbeHoldsBackOnlyItsOwnClient(t *testing.T) {
	t.Parallel()
	o := restingForAll(t)
	o.clock.advance(testPolicy.Cooldown)
	arrived := make(chan struct{})
	var once sync.Once
	stall := poisoned(fakemodel.Reply{Stall: true})
	o.fake.SetReply(func(r fakemodel.Request) fakemodel.Reply {
		reply := stall(r)
		if reply.Stall {
			once.Do(func() { close(arrived) })
		}
		return reply
	})
	probing, stop := context.WithCancel(context.Background())
	defer stop()
	probed := make(chan error, 1)
	go func() {
		_, err := o.callWithin(t, probing, "mallory", "fake-good", "poison") // the probe, stalled
		probed <- err
	}()
	<-arrived
	if _, err := o.callAs(t, "mallory", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
		t.Errorf("mallory's second call while its probe is out: %v, want held back", err)
	}
	if out, err := o.callAs(t, "alice", "fake-good", "hi"); err != nil {
		t.Errorf("alice while mallory's probe is out: %q, %v; want her call answered", out.Content, err)
	}
	stop()
	if err := <-probed; err == nil {
		t.Error("the stalled probe succeeded")
	}
}

// A probe that ends in its own refusal (a 413) could be its client's
// again at once: with one probe for the breaker, mallory looping such
// calls held alice for as long as it went on. Alice's own probe goes
// through, and her answer closes the breaker.
func TestARefusedProbeHoldsNoOtherClient(t *testing.T) {
	t.Parallel()
	o := restingForAll(t)
	o.clock.advance(testPolicy.Cooldown)
	admitted, err := o.d.health.admit(o.clock.now(), "openai", "fake-good", "mallory")
	if err != nil || !admitted.probeModel {
		t.Fatalf("mallory's call: %+v, %v; want it the probe", admitted, err)
	}
	if out, err := o.callAs(t, "alice", "fake-good", "hi"); err != nil {
		t.Errorf("alice while mallory's probe is out: %q, %v; want her call answered", out.Content, err)
	}
	o.d.health.settle(context.Background(), o.clock.now(), admitted, &provider.Error{Status: 413,
		Fault: provider.FaultRequest})
	if again, err := o.d.health.admit(o.clock.now(), "openai", "fake-good", "mallory"); err != nil || again.probeModel {
		t.Errorf("mallory's next call: %+v, %v; want it admitted, the breaker closed by alice's answer", again, err)
	}
}

// A provider's rest for one client, over and unprobed, is forgotten when
// another client's call times out, as when it fails: that client never
// coming back left the provider's timeouts uncounted for everyone else.
func TestTimeoutsCountOnceARestForOneClientIsOver(t *testing.T) {
	t.Parallel()
	o := newOneProvider(t, "chat", "", quiet())
	h, ctx := o.d.health, context.Background()
	timeOut := func(client string, models ...string) {
		t.Helper()
		for _, model := range models {
			p, err := h.admit(o.clock.now(), "openai", model, client)
			if err != nil {
				t.Fatalf("%s's call to %s: %v", client, model, err)
			}
			h.settle(ctx, o.clock.now(), p, context.DeadlineExceeded)
		}
	}
	timeOut("mallory", "fake-good", "fake-broken", "fake-good") // the provider rests for mallory
	if _, err := h.admit(o.clock.now(), "openai", "fake-broken", "mallory"); !errors.Is(err, ErrCoolingDown) {
		t.Fatalf("mallory after timeouts on two models: %v, want the provider resting for it", err)
	}
	o.clock.advance(time.Hour)
	timeOut("alice", "fake-broken", "fake-good", "fake-broken")
	_, err := h.admit(o.clock.now(), "openai", "fake-good", "alice")
	if !errors.Is(err, ErrCoolingDown) || !strings.HasPrefix(err.Error(), "openai is") {
		t.Errorf("alice after timeouts on two models: %v, want the provider resting for her", err)
	}
}

// Other clients' failures while the client a breaker rests for has its
// probe out are counted, and as many as open a breaker widen the rest to
// all: a client that kept a probe out made every other client's failures
// count for nothing (300 of 300 of alice's failing calls reached the
// provider). The probe, once the rest is for all, ends as any call: its
// failure narrowed the rest back to its client.
func TestOthersFailuresDuringAProbeCount(t *testing.T) {
	t.Parallel()
	o := newOneProvider(t, "chat", "", quiet())
	h, ctx := o.d.health, context.Background()
	o.fake.SetReply(poisoned(fakemodel.Reply{Status: http.StatusInternalServerError}))
	for range testPolicy.CooldownAfter {
		o.callAs(t, "mallory", "fake-good", "poison")
	}
	o.clock.advance(testPolicy.Cooldown)
	probe, err := h.admit(o.clock.now(), "openai", "fake-good", "mallory")
	if err != nil || !probe.probeModel {
		t.Fatalf("mallory's call: %+v, %v; want it the probe", probe, err)
	}
	for i := range testPolicy.CooldownAfter {
		if _, err := o.callAs(t, "alice", "fake-good", "poison"); err == nil || errors.Is(err, ErrCoolingDown) {
			t.Fatalf("alice's call %d: %v, want it sent and failed", i+1, err)
		}
	}
	if _, err := o.callAs(t, "carol", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
		t.Errorf("carol after alice's failures during mallory's probe: %v, want the model resting for all", err)
	}
	h.settle(ctx, o.clock.now(), probe, &provider.Error{Status: 500})
	if _, err := o.callAs(t, "carol", "fake-good", "hi"); !errors.Is(err, ErrCoolingDown) {
		t.Errorf("carol after mallory's probe failed: %v, want the model still resting for all", err)
	}
}
