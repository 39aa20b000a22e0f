// Package dispatch makes provider calls dependable: retries with jittered
// exponential backoff that honour Retry-After, all under one deadline; an
// idle timeout for streams that stall; one more try for an empty reply;
// circuit breakers that rest a model, or a whole provider, that keeps
// failing; and fallback to another configured provider that serves the
// same model.
package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/telemetry"
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
	// CooldownAfter consecutive failed calls open a breaker: a model's own
	// failures set that model aside at its provider, provider-wide ones
	// (refused connections, 401/403, timeouts on more than one model) the whole
	// provider, for Cooldown; calls then go to a fallback, or fail fast.
	// After the cooldown one call tests the breaker and closes or reopens it.
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
	health *breakers
}

// New returns a dispatcher over reg. Breakers that open and close are
// logged to logger and counted on in.
func New(reg *routing.Registry, p Policy, logger *slog.Logger, in telemetry.Instruments) *Dispatcher {
	return &Dispatcher{reg: reg, policy: p, now: time.Now, sleep: sleepCtx, health: newBreakers(p, logger, in)}
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

// Generate calls the model of e, or a fallback provider's same model when
// e's provider fails, or its breaker or e's is open. build makes the
// request for the entry that will serve it (model names differ between
// providers).
func (d *Dispatcher) Generate(ctx context.Context, e routing.Entry, build func(routing.Entry) provider.Request, onDelta func(string)) (Outcome, error) {
	ctx, cancel := context.WithTimeoutCause(ctx, d.policy.Deadline, errDeadline)
	defer cancel()
	candidates := append([]routing.Entry{e}, d.reg.Alternatives(e)...)
	var errs []error
	attempts := 0
	for _, c := range candidates {
		admitted, err := d.health.admit(d.now(), c.Provider.Name, c.Name, auth.Client(ctx))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		res, n, err := d.tryProvider(ctx, c, build(c), onDelta)
		attempts += n
		d.health.settle(ctx, d.now(), admitted, blame(ctx, err))
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
		if err == nil && res.Content == "" && !emptyRetried && !blocked(res) {
			// An empty reply sometimes comes good on a second try, asked for
			// as the reference asks Gemini for it.
			emptyRetried = true
			req = askedForSubstance(req)
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

// once is one attempt, cut short when no bytes arrive for IdleTimeout:
// any bytes of the reply, not its text alone (provider.WithActivity).
func (d *Dispatcher) once(ctx context.Context, e routing.Entry, req provider.Request, onDelta func(string)) (provider.Result, error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	idle := time.AfterFunc(d.policy.IdleTimeout, func() { cancel(errIdle) })
	defer idle.Stop()
	actx = provider.WithActivity(actx, func() { idle.Reset(d.policy.IdleTimeout) })
	res, err := e.Provider.Client.Generate(actx, req, onDelta)
	if err != nil && errors.Is(context.Cause(actx), errIdle) && ctx.Err() == nil {
		return provider.Result{}, &provider.Error{Provider: e.Provider.Label, Model: req.Model, Retryable: true,
			Fault: provider.FaultTimeout, Msg: fmt.Sprintf("the provider sent nothing for %s", d.policy.IdleTimeout)}
	}
	return res, err
}

// substance is what the second asking for an empty reply adds, in the
// reference's words.
const substance = "Please provide a substantive response."

// askedForSubstance is req with substance after its last message's text,
// in a copy: the messages are the caller's.
func askedForSubstance(req provider.Request) provider.Request {
	if len(req.Messages) == 0 {
		return req
	}
	req.Messages = slices.Clone(req.Messages)
	last := &req.Messages[len(req.Messages)-1]
	last.Content = strings.TrimRight(last.Content, "\n") + "\n\n" + substance
	return req
}

// blocked reports whether a reply was withheld by the provider's content
// filter.
func blocked(res provider.Result) bool {
	return res.FinishReason == "content_filter" || res.FinishReason == "SAFETY"
}

// checkReply turns a reply with no text into an error saying why.
func checkReply(e routing.Entry, res provider.Result) error {
	if res.Content != "" {
		return nil
	}
	msg := "Response blocked or incomplete. Finish reason: " + res.FinishReason
	if blocked(res) {
		msg = "Your request was blocked by the provider's content safety policy (finish reason " + res.FinishReason + ")"
	}
	return &provider.Error{Provider: e.Provider.Label, Model: e.Name, Fault: provider.FaultRequest, Msg: msg}
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

// errDeadline ends a call that reached the policy's Deadline.
var errDeadline = errors.New("the call's deadline passed")

// blame is err as the breakers should see it. A call cut short by its
// caller, whether it left or its own deadline passed, says nothing of the
// provider or the model: another client waiting longer might be answered.
func blame(ctx context.Context, err error) error {
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errDeadline) {
		return context.Canceled
	}
	return err
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

// Unwrap gives each candidate's failure, so that errors.Is finds
// ErrCoolingDown.
func (f *Failed) Unwrap() []error { return f.Errs }

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
