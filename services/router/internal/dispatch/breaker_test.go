package dispatch

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/catalogue"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
	"go.opentelemetry.io/otel/metric/noop"
)

// twoModels is one provider's catalogue: a model that works and one that
// breaks, with no other provider to fall back to.
const twoModels = `{"models":[{"model_name":"fake-good","context_window":1000},
	{"model_name":"fake-broken","context_window":1000}]}`

// clock is a time the test moves by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// oneProvider is a dispatcher whose only provider is fake.
type oneProvider struct {
	d     *Dispatcher
	reg   *routing.Registry
	fake  *fakemodel.Server
	clock *clock
}

// newOneProvider serves twoModels from fake at baseURL (fake's own URL
// when empty), speaking format; backoffs take no time and the clock moves
// only when the test says.
func newOneProvider(t *testing.T, format, baseURL string, obs observers) *oneProvider {
	t.Helper()
	o := &oneProvider{fake: fakemodel.New(t), clock: &clock{t: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}}
	models, err := catalogue.Parse("two", []byte(twoModels))
	if err != nil {
		t.Fatal(err)
	}
	hc := provider.NewHTTPClient(5 * time.Second)
	var client provider.Generator
	switch format {
	case "gemini":
		if baseURL == "" {
			baseURL = o.fake.GeminiURL()
		}
		if client, err = provider.NewGemini(context.Background(), baseURL, secretKey, hc); err != nil {
			t.Fatal(err)
		}
	default:
		if baseURL == "" {
			baseURL = o.fake.URL()
		}
		client = provider.NewCompat("OpenAI", baseURL, secretKey, hc)
	}
	o.reg, err = routing.New([]*routing.Provider{
		{Name: "openai", Label: "OpenAI", Configured: true, Models: models, Client: client},
	}, "auto")
	if err != nil {
		t.Fatal(err)
	}
	o.d = New(o.reg, testPolicy, obs.logger, obs.in)
	o.d.now = o.clock.now
	o.d.sleep = func(ctx context.Context, _ time.Duration) error { return ctx.Err() }
	return o
}

// observers are where a dispatcher logs and counts its breakers.
type observers struct {
	logger *slog.Logger
	in     telemetry.Instruments
}

// quiet is for tests that read neither.
func quiet() observers {
	return observers{slog.New(slog.DiscardHandler), telemetry.NewInstrumentsOn(noop.NewMeterProvider().Meter("test"))}
}

func (o *oneProvider) call(t *testing.T, model, format string) (Outcome, error) {
	t.Helper()
	e, _, err := o.reg.Resolve(model, "")
	if err != nil {
		t.Fatal(err)
	}
	return o.d.Generate(context.Background(), e, func(e routing.Entry) provider.Request {
		return provider.Request{Model: e.Name, Stream: true, Responses: format == "responses",
			Messages: []provider.Message{{Role: "user", Content: "hi"}}}
	}, nil)
}

// requestsFor counts the requests fake received for model.
func requestsFor(fake *fakemodel.Server, model string) int {
	n := 0
	for _, r := range fake.Requests() {
		if r.Model == model {
			n++
		}
	}
	return n
}

// only answers model with bad and every other model with a good reply.
func only(model string, bad fakemodel.Reply) func(fakemodel.Request) fakemodel.Reply {
	return func(r fakemodel.Request) fakemodel.Reply {
		if r.Model == model {
			return bad
		}
		return fakemodel.Reply{Content: "good answer"}
	}
}

func TestABrokenModelLeavesItsProvidersOtherModelsServing(t *testing.T) {
	t.Parallel()
	failures := []struct {
		name  string
		reply fakemodel.Reply
	}{
		{"unknown model", fakemodel.Reply{Status: http.StatusNotFound, Message: "The model `fake-broken` does not exist"}},
		{"its 500s", fakemodel.Reply{Status: http.StatusInternalServerError}},
		{"its 503s", fakemodel.Reply{Status: http.StatusServiceUnavailable}},
		{"unknown, as a 400", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: "fake-broken is not a valid model ID"}},
		{"its timeouts alone", fakemodel.Reply{Status: http.StatusGatewayTimeout}},
		{"its unreadable replies", fakemodel.Reply{Raw: `{"choices": [oops`}},
		{"its replies cut off", fakemodel.Reply{Content: "one two three four", ResetAfter: 2}},
	}
	for _, format := range wireFormats {
		for _, f := range failures {
			t.Run(format+"/"+f.name, func(t *testing.T) {
				t.Parallel()
				o := newOneProvider(t, format, "", quiet())
				o.fake.SetReply(only("fake-broken", f.reply))
				for i := range testPolicy.CooldownAfter {
					if _, err := o.call(t, "fake-broken", format); err == nil {
						t.Fatalf("call %d to fake-broken succeeded", i+1)
					}
				}
				sent := requestsFor(o.fake, "fake-broken")
				if _, err := o.call(t, "fake-broken", format); !errors.Is(err, ErrCoolingDown) {
					t.Errorf("fake-broken after %d failed calls: %v, want its breaker open", testPolicy.CooldownAfter, err)
				}
				if n := requestsFor(o.fake, "fake-broken") - sent; n != 0 {
					t.Errorf("fake-broken's open breaker let %d requests through", n)
				}
				out, err := o.call(t, "fake-good", format)
				if err != nil || out.Content != "good answer" {
					t.Fatalf("the provider's healthy model, the very next call: %q, %v", out.Content, err)
				}
			})
		}
	}
}

func TestProviderWideFaultsRestTheWholeProvider(t *testing.T) {
	t.Parallel()
	refusing := fakemodel.RefusingURL(t)
	faults := []struct {
		name    string
		reply   fakemodel.Reply
		baseURL string
	}{
		{"401", fakemodel.Reply{Status: http.StatusUnauthorized, Message: "Incorrect API key provided"}, ""},
		{"403", fakemodel.Reply{Status: http.StatusForbidden}, ""},
		{"a key refused as a 400", fakemodel.Reply{Status: http.StatusBadRequest,
			Message: "API key not valid. Please pass a valid API key."}, ""},
		{"timeouts on every model", fakemodel.Reply{Status: http.StatusGatewayTimeout}, ""},
		{"refused connections", fakemodel.Reply{}, refusing},
	}
	for _, f := range faults {
		t.Run(f.name, func(t *testing.T) {
			t.Parallel()
			o := newOneProvider(t, "chat", f.baseURL, quiet())
			o.fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return f.reply })
			models := []string{"fake-good", "fake-broken"}
			for i := range testPolicy.CooldownAfter {
				if _, err := o.call(t, models[i%2], "chat"); err == nil {
					t.Fatalf("call %d succeeded", i+1)
				}
			}
			sent := len(o.fake.Requests())
			for _, m := range models {
				if _, err := o.call(t, m, "chat"); !errors.Is(err, ErrCoolingDown) {
					t.Errorf("%s after a provider-wide fault: %v, want the provider's breaker open", m, err)
				}
			}
			if n := len(o.fake.Requests()) - sent; n != 0 {
				t.Errorf("the provider's open breaker let %d requests through", n)
			}
		})
	}
}

func TestAHalfOpenProbeClosesOrReopensTheBreaker(t *testing.T) {
	t.Parallel()
	o := newOneProvider(t, "chat", "", quiet())
	broken := fakemodel.Reply{Status: http.StatusInternalServerError}
	o.fake.SetReply(only("fake-broken", broken))
	for range testPolicy.CooldownAfter {
		_, _ = o.call(t, "fake-broken", "chat")
	}
	refused := func(when string) {
		t.Helper()
		sent := requestsFor(o.fake, "fake-broken")
		if _, err := o.call(t, "fake-broken", "chat"); !errors.Is(err, ErrCoolingDown) {
			t.Errorf("%s: %v, want the breaker open", when, err)
		}
		if n := requestsFor(o.fake, "fake-broken") - sent; n != 0 {
			t.Errorf("%s: %d requests went through", when, n)
		}
	}
	refused("just opened")
	o.clock.advance(testPolicy.Cooldown - time.Second)
	refused("a second before the cooldown ends")

	o.clock.advance(time.Second)
	if _, err := o.call(t, "fake-broken", "chat"); err == nil || errors.Is(err, ErrCoolingDown) {
		t.Fatalf("the probe after the cooldown: %v, want it sent and failed", err)
	}
	refused("after a failed probe")

	o.clock.advance(testPolicy.Cooldown)
	o.fake.SetReply(only("nothing", fakemodel.Reply{}))
	for i := range 2 {
		if out, err := o.call(t, "fake-broken", "chat"); err != nil || out.Content != "good answer" {
			t.Fatalf("call %d after the model recovered: %q, %v", i+1, out.Content, err)
		}
	}
}

func TestOneProbeAtATime(t *testing.T) {
	t.Parallel()
	o := newOneProvider(t, "chat", "", quiet())
	o.fake.SetReply(only("fake-broken", fakemodel.Reply{Status: http.StatusInternalServerError}))
	for range testPolicy.CooldownAfter {
		_, _ = o.call(t, "fake-broken", "chat")
	}
	o.clock.advance(testPolicy.Cooldown)

	// The first request (the probe) waits for the test; any other is
	// answered at once, so a breaker that let two through shows it.
	arrived, release := make(chan struct{}), make(chan struct{})
	var seen atomic.Int32
	o.fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		if seen.Add(1) == 1 {
			close(arrived)
			<-release
		}
		return fakemodel.Reply{Content: "recovered"}
	})
	probe := make(chan error, 1)
	go func() {
		_, err := o.call(t, "fake-broken", "chat")
		probe <- err
	}()
	<-arrived
	if _, err := o.call(t, "fake-broken", "chat"); !errors.Is(err, ErrCoolingDown) {
		t.Errorf("a call while the probe is out: %v, want it refused", err)
	}
	close(release)
	if err := <-probe; err != nil {
		t.Fatalf("probe: %v", err)
	}
	if _, err := o.call(t, "fake-broken", "chat"); err != nil {
		t.Errorf("after the probe succeeded: %v", err)
	}
}

func TestACallersOwnDeadlineRestsNothing(t *testing.T) {
	t.Parallel()
	o := newOneProvider(t, "chat", "", quiet())
	o.fake.SetReply(only("fake-broken", fakemodel.Reply{Stall: true}))
	e, _, err := o.reg.Resolve("fake-broken", "")
	if err != nil {
		t.Fatal(err)
	}
	for range testPolicy.CooldownAfter {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		_, err := o.d.Generate(ctx, e, func(e routing.Entry) provider.Request {
			return provider.Request{Model: e.Name, Messages: []provider.Message{{Role: "user", Content: "hi"}}}
		}, nil)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the caller's deadline", err)
		}
	}
	o.fake.SetReply(only("nothing", fakemodel.Reply{}))
	if _, err := o.call(t, "fake-broken", "chat"); err != nil {
		t.Errorf("after three callers gave up waiting: %v, want the model still served", err)
	}
}

// A request the provider refuses for what it holds (a bad image, a prompt
// past the context window) is about that request, not the model: one
// client's bad requests must not rest the model for every other client.
func TestARequestsOwnRefusalsLeaveItsModelServing(t *testing.T) {
	t.Parallel()
	refusals := []struct {
		name  string
		reply fakemodel.Reply
	}{
		{"400", fakemodel.Reply{Status: http.StatusBadRequest, Message: "You uploaded an unsupported image."}},
		{"413", fakemodel.Reply{Status: http.StatusRequestEntityTooLarge}},
		{"422", fakemodel.Reply{Status: http.StatusUnprocessableEntity}},
	}
	for _, format := range wireFormats {
		for _, r := range refusals {
			t.Run(format+"/"+r.name, func(t *testing.T) {
				t.Parallel()
				o := newOneProvider(t, format, "", quiet())
				bad := testPolicy.CooldownAfter + 1
				var seen atomic.Int32
				o.fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
					if seen.Add(1) <= int32(bad) {
						return r.reply
					}
					return fakemodel.Reply{Content: "good answer"}
				})
				for i := range bad {
					if _, err := o.call(t, "fake-good", format); err == nil {
						t.Fatalf("refused request %d succeeded", i+1)
					}
				}
				out, err := o.call(t, "fake-good", format)
				if err != nil || out.Content != "good answer" {
					t.Errorf("another request after %d refused ones: %q, %v; want the model to answer it", bad,
						out.Content, err)
				}
			})
		}
	}
}
