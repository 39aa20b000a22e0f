package slots

import (
	"container/list"
	"context"
	"errors"
	"math"
	"sync"
	"time"
)

// ErrOverBudget is Budget.Take's answer when the weight it asked for did
// not come free within the wait.
var ErrOverBudget = errors.New("slots: the process's budget for this work stayed taken")

// Budget bounds the weight of one kind of work a process runs at once,
// whoever it is for: per-client slots bound each client, and so the whole
// only by the number of clients.
//
// Room that comes free goes to the waiting client served least recently,
// each client's work in the order it came: served in the order it came
// across clients, one client's queue of heavy reads kept another's read of
// a kilobyte waiting for every one of them. The work first in line waits
// until its weight is free, and only a client new to the budget is served
// past it meanwhile, once, so that heavy work is not passed over for ever
// by light work.
type Budget struct {
	max int64

	mu      sync.Mutex
	free    int64
	served  uint64             // the grants so far: a client's last one orders whose turn is next
	arrived uint64             // the waiters so far: between clients never served, the first one first
	clients map[string]*client // those holding room or waiting for it
	// demoted are the clients whose work was cut off for its pace
	// (Demote), until when they come back behind every client waiting.
	demoted map[string]time.Time
}

// client is one client's share of a Budget: what it holds, its work
// waiting in the order it came, and when it was last served.
type client struct {
	held    int64
	waiting list.List // of *waiter
	served  uint64
}

type waiter struct {
	weight  int64
	arrived uint64
	granted chan struct{} // closed once its weight is its own
}

// UntilTheCallerLeaves is a wait for Take that only its caller's leaving
// (its context) ends.
const UntilTheCallerLeaves = time.Duration(math.MaxInt64)

// NewBudget allows work weighing size in all at once.
func NewBudget(size int64) *Budget {
	return &Budget{max: size, free: size, clients: map[string]*client{}, demoted: map[string]time.Time{}}
}

// Demote has client who, whose work was cut off for holding room too
// slowly, wait behind every client then waiting, as if served last: its
// work waiting already, and its work that comes back for the next while
// (back as a new client, ahead of them, clients taking turns at work they
// never finished kept the others waiting).
func (b *Budget) Demote(who string, next time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	for c, until := range b.demoted {
		if !now.Before(until) {
			delete(b.demoted, c)
		}
	}
	b.demoted[who] = now.Add(next)
	if c := b.clients[who]; c != nil {
		c.served = b.served + 1 // its work waiting already goes behind too
	}
}

// Max is the weight the budget allows at once.
func (b *Budget) Max() int64 { return b.max }

// Take waits until weight is free and it is the turn of client who, up to
// wait, or until ctx ends. Work heavier than the whole budget takes all of it, so
// that it runs alone rather than never.
func (b *Budget) Take(ctx context.Context, who string, weight int64, wait time.Duration) (release func(),
	err error) {
	weight = max(min(weight, b.max), 1)
	b.mu.Lock()
	c := b.clients[who]
	if c == nil {
		// A client new to the budget takes its turn as if served just
		// before the last grant: ahead of the client served last, behind
		// every one waiting since before it. As if never served, a client
		// forgotten between its pieces of work came back ahead of every
		// client served before, and two taking turns kept those waiting
		// until their waits ran out.
		c = &client{served: max(b.served, 1) - 1}
		if until, ok := b.demoted[who]; ok && time.Now().Before(until) {
			c.served = b.served + 1 // behind everyone served so far, and every newcomer
		}
		b.clients[who] = c
	}
	b.arrived++
	w := &waiter{weight: weight, arrived: b.arrived, granted: make(chan struct{})}
	at := c.waiting.PushBack(w)
	b.grant()
	b.mu.Unlock()

	if !isClosed(w.granted) {
		timer := time.NewTimer(wait)
		defer timer.Stop()
		select {
		case <-w.granted:
		case <-ctx.Done():
		case <-timer.C:
		}
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if isClosed(w.granted) { // also when it came with the wait's end (a wait of 0 for weight that was free)
		return b.releaser(who, c, weight), nil
	}
	c.waiting.Remove(at)
	b.forget(who, c)
	b.grant() // it may have been first in line
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, ErrOverBudget
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// grant serves waiting work while the next in line fits.
func (b *Budget) grant() {
	for {
		var next *client
		var first *waiter
		for _, c := range b.clients {
			head := c.waiting.Front()
			if head == nil {
				continue
			}
			w := head.Value.(*waiter)
			if next == nil || c.served < next.served || c.served == next.served && w.arrived < first.arrived {
				next, first = c, w
			}
		}
		if next == nil || first.weight > b.free {
			return
		}
		next.waiting.Remove(next.waiting.Front())
		b.free -= first.weight
		next.held += first.weight
		b.served += 2 // a newcomer's turn falls between two grants'
		next.served = b.served
		close(first.granted)
	}
}

// releaser gives weight back for c, which the budget keeps while it holds
// any.
func (b *Budget) releaser(who string, c *client, weight int64) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			c.held -= weight
			b.free += weight
			b.forget(who, c)
			b.grant()
		})
	}
}

// forget drops a client that neither holds room nor waits for it: a
// client that comes back after that has its turn as a new one, which it
// is, having nothing running.
func (b *Budget) forget(who string, c *client) {
	if c.held == 0 && c.waiting.Len() == 0 {
		delete(b.clients, who)
	}
}
