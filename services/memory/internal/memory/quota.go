package memory

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrClientFull is a write that would take its client's live threads past
// what one client may keep (Service.LimitClients); nothing of it was
// stored. Deleting threads, or their expiry, makes room. Its errors are
// *ClientFullError.
var ErrClientFull = errors.New("client's threads full")

// ClientFullError is a write refused for its client's bound: what the
// client's threads held, what the write would add, and the bound.
type ClientFullError struct {
	Held, Add, Limit int64
}

func (e *ClientFullError) Error() string {
	return fmt.Sprintf("your conversations hold %s, and this write of %s would take them past the %s zen keeps "+
		"for one client (ZEN_CLIENT_STORE_MB). Delete threads you no longer need, or let old ones expire, then "+
		"try again", InUnits(e.Held), InUnits(e.Add), InUnits(e.Limit))
}

// Is makes a ClientFullError ErrClientFull.
func (e *ClientFullError) Is(target error) bool { return target == ErrClientFull }

// ThreadOverhead is what each thread counts towards its client's bound
// beyond its weight: a thread without turns weighs nothing, yet takes a
// row or a hash, its keys and index entries (about 2 KB in Redis for a
// thread of a short turn, measured), and imports and branches of empty
// threads otherwise went past any bound.
const ThreadOverhead = 2 << 10

// clientQuota bounds what one client's live threads weigh together, so that
// one client cannot fill the store every client shares: imports of 64 MiB,
// back to back, once filled a Redis in seconds and a disk in minutes, and
// then no other client's answer was saved. The unnamed client (no client
// tokens: every caller is one client, or the holder of ZEN_AUTH_TOKEN) is
// not bounded: there is no other client of its store to keep room for.
//
// Weighing a client's threads reads each (Store.ClientWeight), so it is
// not done on every write: each process keeps a count per client, from a
// weighing, raised by each write it admits, and weighs again when the count
// nears the bound (a write would take it past nearShare of it) or is older
// than quotaFresh; but never within reweighAfter of the last weighing, when
// the count decides (it counts writes that then failed too, so it errs
// towards refusing): a client of a million tiny threads at its bound would
// otherwise have every write of its own read them all. One write of a
// client weighs at a time, the others waiting for its count. A weighing
// sees only what is stored, so the writes admitted and not yet stored
// (pending) are added to it.
// Writes through other processes, and threads deleted or expired since,
// show at the next weighing; several memory replicas may together admit up
// to about one bound more each within quotaFresh.
type clientQuota struct {
	limit int64 // 0: none
	mu    sync.Mutex
	count map[string]*quotaCount
}

type quotaCount struct {
	weight  int64         // from the last weighing, with the writes admitted since
	pending int64         // admitted writes not yet stored, or failed
	gen     int           // raised by weighAgain, so a weighing under way is not taken as after it
	at      time.Time     // of the last weighing
	weighed chan struct{} // while a write of the client weighs its threads: closed when it has
}

// quotaFresh is how long a client's count is trusted away from the bound.
const quotaFresh = time.Minute

// reweighAfter is how soon after a weighing a client may be weighed again.
const reweighAfter = 5 * time.Second

// nearShare is the share of the bound past which a client is weighed anew
// before a write: what was deleted, or expired, may make room.
const nearShare = 0.9

// LimitClients bounds what one named client's live threads may weigh
// together (Thread.Weight, as a thread's own bound weighs it, and
// ThreadOverhead a thread), checked on each create, append and import; 0
// lifts the bound. Set it before the service serves.
func (s *Service) LimitClients(weight int64) {
	s.quota = &clientQuota{limit: weight, count: map[string]*quotaCount{}}
}

// admitWeight takes add more of client's weight when the client has room
// for it, and refuses it (a *ClientFullError) when not. The caller calls
// stored once the write it admitted has returned, stored or not.
func (s *Service) admitWeight(ctx context.Context, client string, add int64, now time.Time) (stored func(),
	err error) {
	q := s.quota
	if q == nil || q.limit <= 0 || add <= 0 || client == "" {
		return func() {}, nil
	}
	q.mu.Lock()
	c := q.count[client]
	if c == nil {
		c = &quotaCount{}
		q.count[client] = c
	}
	for c.weighed != nil {
		// Another write of the client weighs its threads: its count is
		// the one to decide on.
		weighed := c.weighed
		q.mu.Unlock()
		select {
		case <-weighed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		q.mu.Lock()
	}
	// A writer's now may come before the last weighing's (taken before it
	// waited): that weighing is as recent for it.
	if age := max(now.Sub(c.at), 0); !c.at.IsZero() &&
		(age < reweighAfter || age < quotaFresh && float64(c.weight+add) <= nearShare*float64(q.limit)) {
		defer q.mu.Unlock()
		return q.admit(c, add)
	}
	weighed := make(chan struct{})
	// No write is admitted while the weighing reads (the others wait for
	// it): what was pending as it began, stored meanwhile or not, in what
	// it read or not, is counted beside it.
	c.weighed = weighed
	pending, gen := c.pending, c.gen
	q.mu.Unlock()
	held, err := s.store.ClientWeight(ctx, client, now)
	q.mu.Lock()
	defer q.mu.Unlock()
	c.weighed = nil
	close(weighed)
	if err != nil {
		return nil, fmt.Errorf("weigh the client's threads: %w", err)
	}
	c.weight = held + pending
	if c.gen == gen { // else weighAgain came meanwhile: this weighing may have read too soon
		c.at = maxTime(c.at, now)
	}
	return q.admit(c, add)
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// admit counts add for c when it fits, pending until the write is stored;
// q.mu is held.
func (q *clientQuota) admit(c *quotaCount, add int64) (stored func(), err error) {
	if c.weight+add > q.limit {
		return nil, &ClientFullError{Held: c.weight, Add: add, Limit: q.limit}
	}
	c.weight += add
	c.pending += add
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			defer q.mu.Unlock()
			c.pending -= add
		})
	}, nil
}

// weighAgain has the client's next write weigh its threads, whatever its
// count says.
func (s *Service) weighAgain(client string) {
	s.quota.change(client, func(c *quotaCount) {
		c.at = time.Time{}
		c.gen++
	})
}

// freeWeight gives back what a thread the client deleted weighed, so
// that the room shows at once, before the next weighing.
func (s *Service) freeWeight(client string, weight int64) {
	s.quota.change(client, func(c *quotaCount) { c.weight = max(0, c.weight-weight-ThreadOverhead) })
}

// change has edit change the client's count, when there is a bound and the
// client has a count.
func (q *clientQuota) change(client string, edit func(c *quotaCount)) {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if c := q.count[client]; c != nil {
		edit(c)
	}
}
