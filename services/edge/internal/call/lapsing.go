package call

import (
	"sync"
	"time"
)

// lapsing remembers values for a while: what the edge learned lately and
// may use again without asking, until it lapses. It holds at most max
// entries, since keys come from clients; lapsed ones go as others come,
// and a full map is emptied rather than let grow. The zero value holds
// nothing and keeps nothing (max 0).
type lapsing[K comparable, V any] struct {
	max   int
	lasts time.Duration

	mu sync.Mutex
	m  map[K]lapsingEntry[V]
}

type lapsingEntry[V any] struct {
	v     V
	until time.Time
}

func newLapsing[K comparable, V any](max int, lasts time.Duration) lapsing[K, V] {
	return lapsing[K, V]{max: max, lasts: lasts}
}

// get is k's value, unless it has lapsed or was never kept.
func (l *lapsing[K, V]) get(k K) (V, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e, ok := l.m[k]
	if !ok || !time.Now().Before(e.until) {
		var zero V
		return zero, false
	}
	return e.v, true
}

// put keeps v for k from now.
func (l *lapsing[K, V]) put(k K, v V) {
	if l.max <= 0 {
		return
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = make(map[K]lapsingEntry[V])
	}
	// Lapsed entries go now, not when the map fills, which a quiet edge
	// would never reach.
	for k, e := range l.m {
		if !now.Before(e.until) {
			delete(l.m, k)
		}
	}
	if len(l.m) >= l.max {
		clear(l.m)
	}
	l.m[k] = lapsingEntry[V]{v: v, until: now.Add(l.lasts)}
}
