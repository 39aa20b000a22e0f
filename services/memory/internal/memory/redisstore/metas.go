package redisstore

import (
	"encoding/json"
	"fmt"
	"sync"
)

// metaCache keeps the threads' metas as decoded, by the bytes they were
// decoded from. A thread's meta, its first call's arguments among it,
// changes only when the thread is written anew, yet every read fetches it;
// decoding it again was most of a continued call's read when an agent's
// first prompt ran to kilobytes. Comparing the bytes fetched with those
// kept costs a fraction of that, and needs no rule about who wrote them.
type metaCache struct {
	mu     sync.Mutex
	bytes  int
	byID   map[string]decodedMeta
	maxLen int // bytes kept at most, of the raw metas
}

type decodedMeta struct {
	raw string
	m   meta // its initial context is shared by every read, which reads it only
}

// maxMetaBytes bounds the raw metas a store keeps, each counted with
// metaOverhead, what keeping it costs besides.
const (
	maxMetaBytes = 16 << 20
	metaOverhead = 256
)

func newMetaCache(maxBytes int) *metaCache {
	return &metaCache{byID: map[string]decodedMeta{}, maxLen: maxBytes}
}

// decode returns the thread's meta decoded from raw, decoding it only
// when raw is not what the cache holds for the thread.
func (c *metaCache) decode(id, raw string) (meta, error) {
	c.mu.Lock()
	kept, ok := c.byID[id]
	c.mu.Unlock()
	if ok && kept.raw == raw {
		return kept.m, nil
	}
	var m meta
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return meta{}, fmt.Errorf("thread %s: decode: %w", id, err)
	}
	c.keep(id, raw, m)
	return m, nil
}

func (c *metaCache) keep(id, raw string, m meta) {
	size := len(raw) + metaOverhead
	if size > c.maxLen/4 {
		return // one thread never takes over the cache
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.forgetLocked(id)
	for other := range c.byID {
		if c.bytes+size <= c.maxLen {
			break
		}
		c.forgetLocked(other) // any: a map's order is as good as another here
	}
	c.byID[id] = decodedMeta{raw: raw, m: m}
	c.bytes += size
}

func (c *metaCache) forgetLocked(id string) {
	if kept, ok := c.byID[id]; ok {
		c.bytes -= len(kept.raw) + metaOverhead
		delete(c.byID, id)
	}
}
