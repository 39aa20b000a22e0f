package dispatch

import (
	"context"
	"time"
)

// A breaker counts its failures by the client whose calls met them
// (auth.Client: the verified token's name). Failures that one client's
// calls alone met open it for that client only (breaker.onlyFor): a client
// whose requests make the provider fail, a 5xx on what it sends or a 429
// for its rate over the key's, rested the model for everyone, for as long
// as it went on. Once another client's call fails too, in the same run of
// failures or while it rests for the first, it rests for all. Without
// tokens every caller is one client, "", and it rests for all at once.

// holds reports whether br, when open, holds back client's calls.
func (br *breaker) holds(client string) bool { return br.onlyFor == "" || br.onlyFor == client }

// restsFor is the metric label of whom br rests for, when open.
func (br *breaker) restsFor() string {
	if br.onlyFor != "" {
		return "client"
	}
	return "all"
}

// count notes that client's call is counted.
func (br *breaker) count(client string) {
	if br.failures == 0 && br.slowCalls == 0 {
		br.client = client
	} else if client != br.client {
		br.shared = true
	}
}

// closeFor closes br after client's call was answered, unless br rests for
// another client alone: one client's answered calls say nothing of what
// the provider does with another's.
func (b *breakers) closeFor(ctx context.Context, br *breaker, client string) {
	if br.open() && !br.holds(client) {
		return
	}
	b.close(ctx, br)
}

// restsAnother settles client's failure on a breaker that rests for another
// client alone, and reports whether it did. While that client's rest runs
// the failures are no longer one client's, and br rests for all (widen).
// Once it is over and that client's probe is out, the others' failures are
// counted, and as many as open a breaker widen it: a client that kept a
// probe out made every other client's failures count for nothing. Once it
// is over and unprobed, the failure begins a new run (false).
func (b *breakers) restsAnother(ctx context.Context, now time.Time, br *breaker, client string, err error) bool {
	if !br.open() || br.holds(client) {
		return false
	}
	switch {
	case now.Before(br.openUntil):
		b.widen(ctx, now, br, err)
		return true
	case len(br.probers) > 0:
		if br.others++; br.others >= b.after {
			b.widen(ctx, now, br, err)
		}
		return true
	}
	b.close(ctx, br)
	return false
}

// widen makes br, which rests for one client, rest for all, for the
// cooldown from now. It counts as another opening (zen_breaker_opened_total),
// and moves from one label of the open gauge to the other.
func (b *breakers) widen(ctx context.Context, now time.Time, br *breaker, err error) {
	b.openNow.Add(ctx, -1, br.attrs())
	// A probe claimed for the one client ends as any call: its failure
	// would narrow the rest back to that client.
	br.onlyFor, br.probers, br.others = "", nil, 0
	br.openUntil, br.reason = now.Add(b.cooldown), reason(err)
	b.opened.Add(ctx, 1, br.attrs())
	b.openNow.Add(ctx, 1, br.attrs())
	b.logger.WarnContext(ctx, "breaker open",
		br.logArgs("widened", "another client's call failed too", "cooldown", b.cooldown.String(), "err", err)...)
}
