package slots

import (
	"sync"
	"time"
)

// Holders counts, for each client, the pieces of work that hold part of a
// Budget, where the client decides how long they hold it (a thread the
// gateway writes as slowly as its client reads): such a client's work is
// not to wait for more, for every other client's work queued behind it
// would wait as long (another client's reads of a kilobyte waited 9 s).
// Work that holds room only while the server works need not count.
//
// Work held past a lease while another client waits can be cut
// (CutStale): a client that read a thread of 32 MiB at 6 KB/s held the
// room for an hour and a half, and every other client's read of more than
// what was left waited out its wait and was refused.
type Holders struct {
	mu    sync.Mutex
	held  map[string]int
	holds map[*hold]struct{}
}

// hold is one piece of work holding room.
type hold struct {
	client string
	cut    Cut // its Off set to nil once cut
}

// A Cut says when and how a piece of work that holds room is cut off for
// another client's waiting work: Off ends it (and must lead to its
// release) once Stale says so. Either nil: it is never cut.
type Cut struct {
	Off   func()
	Stale func(now time.Time) bool
}

// NewHolders counts no work yet.
func NewHolders() *Holders { return &Holders{held: map[string]int{}, holds: map[*hold]struct{}{}} }

// Holding reports whether client's work holds part of the budget.
func (h *Holders) Holding(client string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[client] > 0
}

// Hold counts a piece of client's work, which holds part of the budget
// until release, and returns release. cut is how the work is cut off for
// another client's waiting work (CutStale).
func (h *Holders) Hold(client string, release func(), cut Cut) func() {
	w := &hold{client: client, cut: cut}
	h.mu.Lock()
	h.held[client]++
	h.holds[w] = struct{}{}
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			// Out of the holds before its room is free: a waiter the room
			// wakes would otherwise find it there, and cut work that is
			// done.
			h.mu.Lock()
			delete(h.holds, w)
			if h.held[client]--; h.held[client] == 0 {
				delete(h.held, client)
			}
			h.mu.Unlock()
			release()
		})
	}
}

// CutStale cuts off the work of clients other than waiting that is stale
// by now, each piece once, and returns how many it cut.
//
// Each is cut under the lock its release takes, so that work released is
// never cut after (its answer whole, the cut would drop it): Off must not
// take that lock, nor wait for work that does.
func (h *Holders) CutStale(waiting string, now time.Time) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for w := range h.holds {
		if w.client != waiting && w.cut.Off != nil && w.cut.Stale != nil && w.cut.Stale(now) {
			w.cut.Off()
			w.cut.Off = nil
			n++
		}
	}
	return n
}
