package dispatch

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/provider"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ErrCoolingDown is a provider, or one of its models, set aside after
// repeated failures.
var ErrCoolingDown = errors.New("cooling down after repeated failures")

// Scopes of a breaker: a provider's guards all its models, a model's only
// that model at that provider.
const (
	scopeProvider = "provider"
	scopeModel    = "model"
)

// maxModelBreakers bounds the model breakers kept: OpenRouter serves any
// vendor/model a client names, and names cost nothing to invent.
const maxModelBreakers = 1024

// breaker is one circuit breaker: closed while failures stay under the
// limit, open for the cooldown once they reach it, then half-open, when a
// single call (the probe) tests it and closes or reopens it.
type breaker struct {
	key   modelKey // the model is empty for a provider's breaker
	scope string   // scopeProvider or scopeModel

	failures  int       // consecutive failed calls
	openUntil time.Time // zero while closed
	// probers are the clients whose probe is out: a half-open breaker
	// lets one call of each client through, so that one client's probe,
	// stalled or ending in its own refusal and claimed again, holds back
	// no other client (it held all of them, for as long as it went on).
	probers map[string]bool
	reason  string // why it opened, safe to show to any client
	// A provider's breaker also counts timeouts in a row: on one model they
	// are that model's, on more than one the provider's.
	slowCalls  int
	slowModel  string
	slowSpread bool
	// Whose calls the counts are: client's, while they are one client's;
	// shared once another client's failed too. A breaker opened on one
	// client's failures alone holds back that client only (onlyFor): a
	// client whose requests make the provider fail (a 5xx on what it
	// sends, its rate over the key's) rested the model for everyone. ""
	// holds back every client, and is every caller's name without tokens.
	client  string
	shared  bool
	onlyFor string
	// others counts other clients' failures in a row while a rest for one
	// client is over and its probe is out: as many as open a breaker make
	// it rest for all (a client holds its probe out as long as it likes).
	others int
}

func (br *breaker) open() bool { return !br.openUntil.IsZero() }

// reset closes the breaker and clears its counts.
func (br *breaker) reset() { *br = breaker{key: br.key, scope: br.scope} }

// attrs are its metric labels: never the model, whose names clients
// choose, nor the client it rests for (restsFor).
func (br *breaker) attrs() metric.MeasurementOption {
	return metric.WithAttributes(attribute.String("provider", br.key.provider), attribute.String("scope", br.scope),
		attribute.String("for", br.restsFor()))
}

// logArgs name it in log lines.
func (br *breaker) logArgs(more ...any) []any {
	args := append([]any{"provider", br.key.provider, "scope", br.scope}, more...)
	if br.scope == scopeModel {
		args = append(args, "model", br.key.model)
	}
	if br.onlyFor != "" {
		args = append(args, "for_client", br.onlyFor) // a name from the operator's tokens file
	}
	return args
}

type modelKey struct{ provider, model string }

// breakers holds a dispatcher's breakers: a model's own failures open that
// model's breaker only, so one client's bad model name never blocks
// another client's good model.
type breakers struct {
	after    int
	cooldown time.Duration
	logger   *slog.Logger
	opened   metric.Int64Counter
	openNow  metric.Int64UpDownCounter

	mu        sync.Mutex
	providers map[string]*breaker
	models    map[modelKey]*breaker
}

func newBreakers(p Policy, logger *slog.Logger, in telemetry.Instruments) *breakers {
	return &breakers{after: p.CooldownAfter, cooldown: p.Cooldown, logger: logger, opened: in.BreakerOpened,
		openNow: in.BreakerOpen, providers: map[string]*breaker{}, models: map[modelKey]*breaker{}}
}

// pass is a call admitted past the breakers: whose it is, and which of
// them it probes.
type pass struct {
	key                       modelKey
	client                    string
	probeProvider, probeModel bool
}

// admit lets client's call to model at provider through, or says which
// breaker holds it back.
func (b *breakers) admit(now time.Time, providerName, model, client string) (pass, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	key := modelKey{providerName, model}
	pb, mb := b.providers[providerName], b.models[key]
	if err := held(now, pb, providerName, client); err != nil {
		return pass{}, err
	}
	if err := held(now, mb, providerName+"'s "+model, client); err != nil {
		return pass{}, err
	}
	return pass{key: key, client: client, probeProvider: claimProbe(pb, client),
		probeModel: claimProbe(mb, client)}, nil
}

// held reports a breaker that is open for client, or half-open with
// client's probe out.
func held(now time.Time, br *breaker, who, client string) error {
	if br == nil || !br.open() || !br.holds(client) {
		return nil
	}
	whose := ""
	if br.onlyFor != "" {
		whose = ", on this client's own calls: others are served"
	}
	if now.Before(br.openUntil) {
		return fmt.Errorf("%s is %w (%s%s; for %s more)", who, ErrCoolingDown, br.reason, whose,
			br.openUntil.Sub(now).Round(time.Second))
	}
	if br.probers[client] {
		return fmt.Errorf("%s is %w (%s%s; a call of this client's is testing it now)", who, ErrCoolingDown,
			br.reason, whose)
	}
	return nil
}

// claimProbe makes client's call its probe of a half-open breaker that
// holds it back.
func claimProbe(br *breaker, client string) bool {
	if br == nil || !br.open() || !br.holds(client) || br.probers[client] {
		return false
	}
	if br.probers == nil {
		br.probers = map[string]bool{}
	}
	br.probers[client] = true
	return true
}

// verdict is what a call's outcome says about the breakers' scopes.
type verdict int

const (
	neutral       verdict = iota // nothing: the caller left, or the request alone was at fault
	answered                     // the model answered
	modelFault                   // the model failed, but its provider answered
	providerFault                // every model of the provider would have failed
	slow                         // no reply in time
)

func judge(err error) verdict {
	var perr *provider.Error
	switch {
	case err == nil:
		return answered
	case errors.Is(err, context.Canceled):
		return neutral
	case errors.Is(err, context.DeadlineExceeded):
		return slow
	case !errors.As(err, &perr):
		return modelFault
	}
	switch perr.Fault {
	case provider.FaultProvider:
		return providerFault
	case provider.FaultTimeout:
		return slow
	case provider.FaultRequest:
		return neutral
	}
	return modelFault
}

// settle records the outcome of a call admitted by p.
func (b *breakers) settle(ctx context.Context, now time.Time, p pass, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	pb := b.providers[p.key.provider]
	if pb == nil {
		pb = &breaker{key: modelKey{provider: p.key.provider}, scope: scopeProvider}
		b.providers[p.key.provider] = pb
	}
	switch judge(err) {
	case neutral:
		if p.probeProvider {
			delete(pb.probers, p.client)
		}
		b.releaseModel(p)
	case answered:
		b.closeFor(ctx, pb, p.client)
		b.closeModel(ctx, p.key, p.client)
	case modelFault:
		b.closeFor(ctx, pb, p.client) // it answered, so it is up
		b.fail(ctx, now, b.model(now, p.key), p.probeModel, p.client, err)
	case providerFault:
		b.fail(ctx, now, pb, p.probeProvider, p.client, err)
		b.releaseModel(p)
	case slow:
		b.fail(ctx, now, b.model(now, p.key), p.probeModel, p.client, err)
		b.slow(ctx, now, pb, p, err)
	}
}

// slow counts a timeout against the provider: it rests once timeouts in
// a row reach the limit on more than one model, or its probe times out.
func (b *breakers) slow(ctx context.Context, now time.Time, pb *breaker, p pass, err error) {
	if pb.open() && !pb.holds(p.client) {
		if now.Before(pb.openUntil) || len(pb.probers) > 0 {
			return // a timeout is no sign that another client's failures were the provider's
		}
		b.close(ctx, pb) // that client's rest is over: this timeout begins a new run
	}
	probe := p.probeProvider && pb.probers[p.client]
	if pb.open() && !probe {
		return
	}
	pb.count(p.client)
	pb.slowCalls++
	if pb.slowModel == "" {
		pb.slowModel = p.key.model
	} else if pb.slowModel != p.key.model {
		pb.slowSpread = true
	}
	if probe || pb.slowSpread && pb.slowCalls >= b.after {
		b.trip(ctx, now, pb, pb.slowCalls, err)
	}
}

// fail counts client's failed call; a failed probe reopens the breaker at
// once. Calls admitted before the breaker opened change nothing when they
// end, unless they are another client's than the one it rests for
// (restsAnother). A probe whose breaker was closed meanwhile is counted as
// any call.
func (b *breakers) fail(ctx context.Context, now time.Time, br *breaker, probe bool, client string, err error) {
	if br == nil || b.restsAnother(ctx, now, br, client, err) {
		return
	}
	probe = probe && br.probers[client]
	if br.open() && !probe {
		return
	}
	br.count(client)
	br.failures++
	if probe || br.failures >= b.after {
		b.trip(ctx, now, br, br.failures, err)
	}
}

// trip opens br for the cooldown, or again after a failed probe: for the
// one client whose calls alone failed, or for all. A failed probe reopens
// it for its own client alone, whoever it rested for: one client sending
// a failing call the moment each rest ended kept a model that had
// recovered away from everyone.
func (b *breakers) trip(ctx context.Context, now time.Time, br *breaker, failures int, err error) {
	if br.open() {
		b.openNow.Add(ctx, -1, br.attrs()) // it may rest for others now
	}
	onlyFor := br.client
	if br.shared {
		onlyFor = ""
	}
	br.reset()
	br.openUntil, br.reason, br.onlyFor = now.Add(b.cooldown), reason(err), onlyFor
	b.opened.Add(ctx, 1, br.attrs())
	b.openNow.Add(ctx, 1, br.attrs())
	b.logger.WarnContext(ctx, "breaker open",
		br.logArgs("failures", failures, "cooldown", b.cooldown.String(), "err", err)...)
}

// close closes a breaker after a call it guards was answered.
func (b *breakers) close(ctx context.Context, br *breaker) {
	if br.open() {
		b.openNow.Add(ctx, -1, br.attrs())
		b.logger.InfoContext(ctx, "breaker closed", br.logArgs()...)
	}
	br.reset()
}

// closeModel closes a model's breaker after client's call to it was
// answered, and forgets it: a model that answers needs no entry. One that
// rests for another client alone stays (closeFor).
func (b *breakers) closeModel(ctx context.Context, key modelKey, client string) {
	if mb := b.models[key]; mb != nil && (!mb.open() || mb.holds(client)) {
		b.close(ctx, mb)
		delete(b.models, key)
	}
}

func (b *breakers) releaseModel(p pass) {
	if mb := b.models[p.key]; mb != nil && p.probeModel {
		delete(mb.probers, p.client)
	}
}

// model finds or makes key's breaker. When maxModelBreakers are kept it
// first drops those that are closed or whose cooldown has ended unprobed;
// if none can go, the model goes untracked (nil): a breaker protects, and
// missing one costs only calls that fail.
func (b *breakers) model(now time.Time, key modelKey) *breaker {
	if mb := b.models[key]; mb != nil {
		return mb
	}
	if len(b.models) >= maxModelBreakers {
		for k, mb := range b.models {
			if mb.open() && (now.Before(mb.openUntil) || len(mb.probers) > 0) {
				continue
			}
			if mb.open() {
				b.openNow.Add(context.Background(), -1, mb.attrs())
			}
			delete(b.models, k)
		}
		if len(b.models) >= maxModelBreakers {
			return nil
		}
	}
	mb := &breaker{key: key, scope: scopeModel}
	b.models[key] = mb
	return mb
}

// reason says why a breaker opened in words safe for every client: the
// provider's own message may quote another client's request.
func reason(err error) string {
	var perr *provider.Error
	if errors.As(err, &perr) && perr.Status != 0 {
		return fmt.Sprintf("the last failure: HTTP %d", perr.Status)
	}
	switch judge(err) {
	case providerFault:
		return "the provider could not be reached"
	case slow:
		return "no reply in time"
	}
	return "the last reply could not be used"
}
