package slots

import "sync"

// Holders counts, for each client, the pieces of work that hold part of a
// Budget, where the client decides how long they hold it (a thread the
// gateway writes as slowly as its client reads): such a client's work is
// not to wait for more, for every other client's work queued behind it
// would wait as long (another client's reads of a kilobyte waited 9 s).
// Work that holds room only while the server works need not count.
type Holders struct {
	mu   sync.Mutex
	held map[string]int
}

// NewHolders counts no work yet.
func NewHolders() *Holders { return &Holders{held: map[string]int{}} }

// Holding reports whether client's work holds part of the budget.
func (h *Holders) Holding(client string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held[client] > 0
}

// Hold counts a piece of client's work, which holds part of the budget
// until release, and returns release.
func (h *Holders) Hold(client string, release func()) func() {
	h.mu.Lock()
	h.held[client]++
	h.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			release()
			h.mu.Lock()
			defer h.mu.Unlock()
			if h.held[client]--; h.held[client] == 0 {
				delete(h.held, client)
			}
		})
	}
}
