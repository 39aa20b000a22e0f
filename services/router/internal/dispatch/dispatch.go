// Package dispatch makes provider calls dependable: retries with jittered
// exponential backoff that honour Retry-After, all under one deadline; an
// idle timeout for streams that stall; one more try for an empty reply; a
// cooldown for a provider that keeps failing; and fallback to another
// configured provider that serves the same model.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/router/internal/provider"
	"github.com/zenmcp/zen/services/router/internal/routing"
)

// Policy bounds how hard a call tries.
type Policy struct {
	Attempts    int           // tries per provider, the first included
	BaseDelay   time.Duration // first backoff; doubles each retry, with full jitter
	MaxDelay    time.Duration // cap on one backoff, and on an honoured Retry-After
	Deadline    time.Duration // for the whole call, retries and fallbacks included
	IdleTimeout time.Duration // longest wait for the next piece of a reply
	// CooldownAfter consecutive failed calls put a provider aside for
	// Cooldown; calls then go to a fallback, or fail fast.
	CooldownAfter int
	Cooldown      time.Duration
}

// DefaultPolicy matches the reference's four attempts with waits of a few
// seconds, and the long read timeouts reasoning models need.
var DefaultPolicy = Policy{
	Attempts: 4, BaseDelay: time.Second, MaxDelay: 8 * time.Second, Deadline: 30 * time.Minute,
	IdleTimeout: 5 * time.Minute, CooldownAfter: 3, Cooldown: 30 * time.Second,
}

// Outcome is a finished call and who served it.
type Outcome struct {
	provider.Result
	Served   routing.Entry
	Attempts int
}

// Dispatcher runs generations.
type Dispatcher struct {
	reg    *routing.Registry
	policy Policy
	now    func() time.Time
	sleep  func(context.Context, time.Duration) error

	mu     sync.Mutex
	health map[string]*providerHealth
}

type providerHealth struct {
	failures int
	until    time.Time
}

// New returns a dispatcher over reg.
func New(reg *routing.Registry, p Policy) *Dispatcher {
	return &Dispatcher{reg: reg, policy: p, now: time.Now, sleep: sleepCtx, health: map[string]*providerHealth{}}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrCoolingDown is a provider set aside after repeated failures.
var ErrCoolingDown = errors.New("cooling down after repeated failures")

// Generate calls the model of e, or a fallback provider's same model when
// e's provider fails or is cooling down. build makes the request for the
// entry that will serve it (model names differ between providers).
func (d *Dispatcher) Generate(ctx context.Context, e routing.Entry, build func(routing.Entry) provider.Request, onDelta func(string)) (Outcome, error) {
	ctx, cancel := context.WithTimeout(ctx, d.policy.Deadline)
	defer cancel()
	candidates := append([]routing.Entry{e}, d.reg.Alternatives(e)...)
	var errs []error
	attempts := 0
	for _, c := range candidates {
		if wait, cooling := d.cooling(c.Provider.Name); cooling {
			errs = append(errs, fmt.Errorf("%s is %w (for %s more)", c.Provider.Name, ErrCoolingDown, wait.Round(time.Second)))
			continue
		}
		res, n, err := d.tryProvider(ctx, c, build(c), onDelta)
		attempts += n
		d.record(c.Provider.Name, err)
		if err == nil {
			return Outcome{Result: res, Served: c, Attempts: attempts}, nil
		}
		if ctx.Err() != nil {
			return Outcome{}, finalError(ctx, err)
		}
		errs = append(errs, err)
		var perr *provider.Error
		if errors.As(err, &perr) && !perr.Retryable {
			// The request itself is at fault (or the reply was blocked):
			// another provider would refuse it too.
			break
		}
	}
	return Outcome{}, &Failed{Attempts: attempts, Errs: errs}
}

// tryProvider makes up to Attempts tries against one provider.
func (d *Dispatcher) tryProvider(ctx context.Context, e routing.Entry, req provider.Request, onDelta func(string)) (provider.Result, int, error) {
	emptyRetried := false
	for attempt := 1; ; attempt++ {
		res, err := d.once(ctx, e, req, onDelta)
		if err == nil && res.Content == "" && !emptyRetried {
			emptyRetried = true // an empty reply sometimes comes good on a second try
			attempt--
			continue
		}
		if err == nil {
			err = checkReply(e, res)
		}
		if err == nil {
			return res, attempt, nil
		}
		var perr *provider.Error
		if !errors.As(err, &perr) || !perr.Retryable || attempt >= d.policy.Attempts || ctx.Err() != nil {
			return provider.Result{}, attempt, err
		}
		wait := d.backoff(attempt, perr.RetryAfter)
		if deadline, ok := ctx.Deadline(); ok && d.now().Add(wait).After(deadline) {
			return provider.Result{}, attempt, err // waiting would only run out the clock
		}
		if err := d.sleep(ctx, wait); err != nil {
			return provider.Result{}, attempt, err
		}
	}
}

// errIdle ends an attempt whose provider went quiet.
var errIdle = errors.New("idle")

// once is one attempt, cut short when no bytes arrive for IdleTimeout.
func (d *Dispatcher) once(ctx context.Context, e routing.Entry, req provider.Request, onDelta func(string)) (provider.Result, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(d.policy.IdleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()
	res, err := e.Provider.Client.Generate(actx, req, func(delta string) {
		idle.Reset(d.policy.IdleTimeout)
		if onDelta != nil {
			onDelta(delta)
		}
	})
	if err != nil && errors.Is(context.Cause(actx), errIdle) && ctx.Err() == nil {
		return provider.Result{}, &provider.Error{Provider: e.Provider.Label, Model: req.Model, Retryable: true,
			Msg: fmt.Sprintf("the provider sent nothing for %s", d.policy.IdleTimeout)}
	}
	return res, err
}

// checkReply turns a reply with no text into an error saying why.
func checkReply(e routing.Entry, res provider.Result) error {
	if res.Content != "" {
		return nil
	}
	msg := "Response blocked or incomplete. Finish reason: " + res.FinishReason
	if res.FinishReason == "content_filter" || res.FinishReason == "SAFETY" {
		msg = "Your request was blocked by the provider's content safety policy (finish reason " + res.FinishReason + ")"
	}
	return &provider.Error{Provider: e.Provider.Label, Model: e.Name, Msg: msg}
}

// backoff is exponential with full jitter, or what the provider asked for
// (never beyond MaxDelay).
func (d *Dispatcher) backoff(attempt int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return min(retryAfter, d.policy.MaxDelay)
	}
	ceiling := min(d.policy.BaseDelay<<(attempt-1), d.policy.MaxDelay)
	return time.Duration(rand.Int64N(int64(ceiling)) + 1)
}

func (d *Dispatcher) cooling(name string) (time.Duration, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.health[name]
	if h == nil || !d.now().Before(h.until) {
		return 0, false
	}
	return h.until.Sub(d.now()), true
}

// record counts consecutive failed calls; a success clears the count.
func (d *Dispatcher) record(name string, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	h := d.health[name]
	if h == nil {
		h = &providerHealth{}
		d.health[name] = h
	}
	var perr *provider.Error
	if err == nil || errors.Is(err, context.Canceled) || errors.As(err, &perr) && !perr.Retryable {
		// Success, a caller who left, or a request the provider refused on
		// its merits: none says the provider is unwell.
		if err == nil {
			h.failures = 0
		}
		return
	}
	h.failures++
	if h.failures >= d.policy.CooldownAfter {
		h.until = d.now().Add(d.policy.Cooldown)
		h.failures = 0
	}
}

// finalError reports a call that ran out of time as such.
func finalError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: %v", context.DeadlineExceeded, err)
	}
	return ctx.Err()
}

// Failed is a call no provider could answer.
type Failed struct {
	Attempts int
	Errs     []error
}

func (f *Failed) Error() string {
	if len(f.Errs) == 0 {
		return "no provider could serve the model"
	}
	msg := fmt.Sprintf("%v after %d attempt(s)", f.Errs[0], f.Attempts)
	for _, e := range f.Errs[1:] {
		msg += "; then " + e.Error()
	}
	return msg
}

// Retryable reports whether a later call may succeed.
func (f *Failed) Retryable() bool {
	for _, e := range f.Errs {
		var perr *provider.Error
		if errors.Is(e, ErrCoolingDown) || errors.As(e, &perr) && perr.Retryable {
			return true
		}
	}
	return false
}
