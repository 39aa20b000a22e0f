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
// stored. Deleting threads, or their expiry, makes room.
var ErrClientFull = errors.New("client's threads full")

// clientQuota bounds what one client's live threads weigh together, so that
// one client cannot fill the store every client shares: imports of 64 MiB,
// back to back, once filled a Redis in seconds and a disk in minutes, and
// then no other client's answer was saved.
//
// Weighing a client's threads reads each (Store.ClientWeight), so it is
// not done on every write: each process keeps a count per client, from a
// weighing, raised by each write it admits, and weighs again when the count
// nears the bound (a write would take it past nearShare of it) or is older
// than quotaFresh; but never within reweighAfter of the last weighing, nor
// while another write of the client weighs, when the count decides (it
// counts writes that then failed too, so it errs towards refusing): a
// client of a million tiny threads at its bound would otherwise have every
// write of its own read them all. Writes through other processes, and
// threads deleted or expired since, show at the next weighing; several
// memory replicas may together admit up to about one bound more each
// within quotaFresh.
type clientQuota struct {
	limit int64 // 0: none
	mu    sync.Mutex
	count map[string]quotaCount
}

type quotaCount struct {
	weight   int64
	at       time.Time // of the weighing it started from
	weighing bool      // a write of the client is weighing its threads
}

// quotaFresh is how long a client's count is trusted away from the bound.
const quotaFresh = time.Minute

// reweighAfter is how soon after a weighing a client may be weighed again.
const reweighAfter = 5 * time.Second

// nearShare is the share of the bound past which a client is weighed anew
// before a write: what was deleted, or expired, may make room.
const nearShare = 0.9

// LimitClients bounds what one client's live threads may weigh together
// (Thread.Weight, as a thread's own bound weighs it), checked on each
// create, append and import; 0 lifts the bound. Set it before the service
// serves.
func (s *Service) LimitClients(weight int64) {
	s.quota = &clientQuota{limit: weight, count: map[string]quotaCount{}}
}

// admitWeight takes add more of client's weight when the client has room
// for it, and refuses it (ErrClientFull) when not.
func (s *Service) admitWeight(ctx context.Context, client string, add int64, now time.Time) error {
	q := s.quota
	if q == nil || q.limit <= 0 || add <= 0 {
		return nil
	}
	q.mu.Lock()
	c, ok := q.count[client]
	age := now.Sub(c.at)
	switch {
	case ok && age >= 0 && age < quotaFresh && float64(c.weight+add) <= nearShare*float64(q.limit),
		ok && (c.weighing || age >= 0 && age < reweighAfter):
		defer q.mu.Unlock()
		if c.weight+add > q.limit {
			return clientFull(c.weight, add, q.limit)
		}
		c.weight += add
		q.count[client] = c
		return nil
	}
	c.weighing = true
	q.count[client] = c
	q.mu.Unlock()
	held, err := s.store.ClientWeight(ctx, client, now)
	q.mu.Lock()
	defer q.mu.Unlock()
	if err != nil {
		c = q.count[client]
		c.weighing = false
		q.count[client] = c
		return fmt.Errorf("weigh the client's threads: %w", err)
	}
	if held+add > q.limit {
		q.count[client] = quotaCount{weight: held, at: now}
		return clientFull(held, add, q.limit)
	}
	q.count[client] = quotaCount{weight: held + add, at: now}
	return nil
}

// freeWeight gives back what a thread the client deleted weighed, so
// that the room shows at once, before the next weighing.
func (s *Service) freeWeight(client string, weight int64) {
	q := s.quota
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if c, ok := q.count[client]; ok {
		c.weight = max(0, c.weight-weight)
		q.count[client] = c
	}
}

// clientFull says why a write of add did not fit beside held.
func clientFull(held, add, limit int64) error {
	return fmt.Errorf("%w: your conversations hold %s, and this write of %s would take them past the %s zen "+
		"keeps for one client (ZEN_CLIENT_STORE_MB). Delete threads you no longer need, or let old ones expire, "+
		"then try again", ErrClientFull, InUnits(held), InUnits(add), InUnits(limit))
}
