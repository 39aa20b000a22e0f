package memory

import (
	"container/list"
	"crypto/rand"
	"encoding/hex"
	"sync"
)

// DefaultTurnCacheBytes bounds the turns a store keeps decoded: about the
// text of a thousand 50-turn conversations.
const DefaultTurnCacheBytes = 64 << 20

// turnOverhead is what a cached turn costs besides its text.
const turnOverhead = 256

// TurnCache keeps the decoded turns of recently read threads, so that a
// read decodes only the turns appended since the last one: a continued
// call reads its thread whole, and decoding every stored turn on each read
// was most of memory's CPU.
//
// A thread's turns never change once written, except when the thread is
// written anew (an import that replaces it, or a delete and a create with
// the same id): each such write gives the thread a new revision, and the
// cache keeps turns by thread id and revision. A store reads the thread's
// revision and turn count with every read, in the same statement or round
// trip as the rest of its head (or knows that nobody else has written
// since it last did: sqlitestore's rows), so other processes writing the
// same store are seen at once. The turns a read lacks are read at the
// revision of the head it read (in the same statement or transaction, or
// on condition that the thread is still at it: see ReadAgain), so that a
// read returns one version of its thread. An append this process commits
// adds its turns (see Appended), so a continued call's read, which follows
// its previous call's append, decodes none.
type TurnCache struct {
	mu    sync.Mutex
	max   int64
	size  int64
	lru   list.List // of *cachedTurns, most recently used first
	byKey map[string]*list.Element
}

type cachedTurns struct {
	id, rev string
	turns   []Turn
	// tail is what the store that cached the turns says the last of them
	// is as it stores them (Redis: a digest), which it checks against its
	// own at its next read; "" for a store that checks by count alone
	// (SQLite), or for turns no store checked.
	tail  string
	bytes int64
}

// NewTurnCache keeps up to maxBytes of turn text; 0 or less keeps nothing.
func NewTurnCache(maxBytes int64) *TurnCache {
	return &TurnCache{max: maxBytes, byKey: map[string]*list.Element{}}
}

// NewRevision names a new write of a whole thread.
func NewRevision() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Known returns the turns cached for the thread at rev, at most count of
// them; none when the thread is not cached at that revision. The slice is
// shared: callers read it and never change it.
func (c *TurnCache) Known(id, rev string, count int) []Turn {
	if c == nil || rev == "" {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ct := c.usedLocked(id, func(ct *cachedTurns) bool { return ct.rev == rev })
	if ct == nil {
		return nil
	}
	return ct.turns[:min(count, len(ct.turns))]
}

// usedLocked is the thread's cached turns when ok takes them, marked used;
// nil otherwise. The caller holds mu.
func (c *TurnCache) usedLocked(id string, ok func(*cachedTurns) bool) *cachedTurns {
	e, found := c.byKey[id]
	if !found || !ok(e.Value.(*cachedTurns)) {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*cachedTurns)
}

// Last says which revision of the thread is cached, how many of its turns,
// and the tail they end in (cachedTurns.tail): a store that reads the head
// and the turns in one round trip asks for the turns after those.
func (c *TurnCache) Last(id string) (rev string, turns int, tail string) {
	if c == nil {
		return "", 0, ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[id]; ok {
		ct := e.Value.(*cachedTurns)
		return ct.rev, len(ct.turns), ct.tail
	}
	return "", 0, ""
}

// Read answers a thread's turns from the cache and decodes only the rest:
// count is the stored turn count read with rev, and rest reads the turns
// from index from up to count. It returns a slice the caller owns.
func (c *TurnCache) Read(id, rev string, count int, rest func(from int) ([]Turn, error)) ([]Turn, error) {
	return c.read(id, rev, c.Known(id, rev, count), count, "", rest)
}

// ReadChecked is Read for a store that checked the seen turns the cache
// held, ending in tail (Last), against its own: it takes them only while
// the cache holds those very turns, for another read may have put others
// since, and keeps the turns it answers with last, their tail.
func (c *TurnCache) ReadChecked(id, rev string, seen int, tail string, count int, last string,
	rest func(from int) ([]Turn, error)) ([]Turn, error) {
	return c.read(id, rev, c.checked(id, rev, seen, tail), count, last, rest)
}

// checked is the seen turns cached at rev, when they still end in tail.
func (c *TurnCache) checked(id, rev string, seen int, tail string) []Turn {
	if c == nil || seen == 0 {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	ct := c.usedLocked(id, func(ct *cachedTurns) bool {
		return ct.rev == rev && len(ct.turns) == seen && ct.tail == tail
	})
	if ct == nil {
		return nil
	}
	return ct.turns
}

// read answers count turns: known, then what rest reads from there; the
// turns are kept, ending in tail, when rest read any.
func (c *TurnCache) read(id, rev string, known []Turn, count int, tail string,
	rest func(from int) ([]Turn, error)) ([]Turn, error) {
	if len(known) == count {
		return append([]Turn(nil), known...), nil
	}
	fresh, err := rest(len(known))
	if err != nil {
		return nil, err
	}
	all := make([]Turn, 0, len(known)+len(fresh))
	all = append(append(all, known...), fresh...)
	c.put(id, rev, all, tail)
	return append([]Turn(nil), all...), nil
}

// appended records turns a store has just committed as the thread's from
// index from on, at rev, which the store read in the same write or, when
// it cannot, from Last before the write: the revision of a thread is never
// used again once it is written anew, so a stale one only ever names turns
// no read asks for. When the cache holds the thread's first from turns at
// rev, it extends them, and the next read decodes none; otherwise it
// leaves the thread as it is, but for turns at rev the store appended
// before: past from, or ending in another tail than prev, the one the
// store found before its new turns, they are not the thread's (a Redis
// back without its last writes lost them, and another process may have
// appended where they were), and it drops them. The cache owns turns,
// which must read as the store would decode them; none leaves it to check
// the thread's turns alone.
func (c *TurnCache) appended(id, rev string, from int, prev string, turns []Turn, last string) {
	if c == nil || rev == "" {
		return
	}
	n := turnBytes(turns)
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.byKey[id]
	if !ok {
		return
	}
	ct := e.Value.(*cachedTurns)
	switch {
	case ct.rev != rev || len(ct.turns) < from:
		return
	case len(ct.turns) > from || ct.tail != prev:
		c.removeLocked(id)
		return
	case len(turns) == 0:
		return
	}
	if ct.bytes+n > c.max/4 {
		c.removeLocked(id) // one thread never takes over the cache
		return
	}
	// In place: readers hold at most the first from turns, which this
	// leaves as they are.
	ct.turns = append(ct.turns, turns...)
	ct.tail = last
	ct.bytes += n
	c.size += n
	c.lru.MoveToFront(e)
	c.evictLocked()
}

// Appended records turns a store has just committed, as the store wrote
// them, from index from on, after a turn that ends in prev, the last
// ending in last (see appended; both "" for a store that checks no tail).
// Each is kept as the store would decode it, and only when the cache would
// keep them; the cache then owns them, and those who gave them change them
// no more.
func (c *TurnCache) Appended(id, rev string, from int, prev string, turns []Turn, last string) {
	if cached, n, _ := c.Last(id); cached != rev || n < from || rev == "" {
		return
	}
	stored := make([]Turn, len(turns))
	for i, t := range turns {
		var ok bool
		if stored[i], ok = asStored(t); ok {
			continue
		}
		if stored[i], ok = roundTrip(t); !ok {
			// The store encoded it; the next read decodes it, and says
			// what is wrong. Turns the cache holds past from still go.
			c.appended(id, rev, from, prev, nil, "")
			return
		}
	}
	c.appended(id, rev, from, prev, stored, last)
}

// turnBytes is what turns cost the cache: their text, images, files and
// the values of their workflow states and model metadata, each of which
// is a map, a slice or a string held decoded. Charging the text alone kept
// a thread of short turns with states of thousands of values as if it held
// a few hundred bytes a turn.
func turnBytes(turns []Turn) int64 {
	var n int64
	for i := range turns {
		t := &turns[i]
		n += int64(len(t.Content)) + turnOverhead
		for _, img := range t.Images {
			n += int64(len(img)) + 16
		}
		for _, f := range t.Files {
			n += int64(len(f.Path)+len(f.SHA256)) + 64
		}
		if t.WorkflowState != nil {
			n += valueBytes(t.WorkflowState)
		}
		if t.ModelMetadata != nil {
			n += valueBytes(t.ModelMetadata)
		}
	}
	return n
}

// valueBytes estimates what a decoded JSON value holds: its strings, and
// a few words for each value, map entry and slice.
func valueBytes(v any) int64 {
	switch v := v.(type) {
	case map[string]any:
		n := int64(48)
		for k, e := range v {
			n += int64(len(k)) + 32 + valueBytes(e)
		}
		return n
	case []any:
		n := int64(24)
		for _, e := range v {
			n += valueBytes(e)
		}
		return n
	case string:
		return int64(len(v)) + 16
	}
	return 16
}

// put caches turns, which the cache then owns, as the thread's at rev,
// ending in tail.
func (c *TurnCache) put(id, rev string, turns []Turn, tail string) {
	if c == nil || rev == "" {
		return
	}
	n := turnBytes(turns)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.byKey[id]; ok {
		if ct := e.Value.(*cachedTurns); ct.rev == rev && len(ct.turns) >= len(turns) {
			// An append extended the thread meanwhile: keep the longer.
			c.lru.MoveToFront(e)
			return
		}
	}
	c.removeLocked(id)
	if n > c.max/4 {
		return // one thread never takes over the cache
	}
	c.byKey[id] = c.lru.PushFront(&cachedTurns{id: id, rev: rev, turns: turns, tail: tail, bytes: n})
	c.size += n
	c.evictLocked()
}

// evictLocked drops the least recently used threads until the cache is
// within its bound.
func (c *TurnCache) evictLocked() {
	for c.size > c.max {
		c.removeLocked(c.lru.Back().Value.(*cachedTurns).id)
	}
}

// Forget drops a thread, when it is deleted.
func (c *TurnCache) Forget(id string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.removeLocked(id)
}

func (c *TurnCache) removeLocked(id string) {
	e, ok := c.byKey[id]
	if !ok {
		return
	}
	c.size -= e.Value.(*cachedTurns).bytes
	c.lru.Remove(e)
	delete(c.byKey, id)
}
