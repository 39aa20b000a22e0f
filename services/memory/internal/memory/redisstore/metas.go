package redisstore

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// metaCache keeps the threads' metas as decoded, by the bytes they were
// decoded from (memory.Heads). A thread's meta, its first call's
// arguments among it, changes only when the thread is written anew: a
// continued call's read is not sent it when it is the one held (held),
// and every other read compares the bytes it fetched with those kept,
// which costs a fraction of decoding them again and needs no rule about
// who wrote them.
type metaCache struct {
	mu    sync.Mutex
	heads *memory.Heads[decodedMeta]
}

type decodedMeta struct {
	raw string
	m   meta // its initial context is shared by every read, which reads it only
}

func newMetaCache(maxBytes int) *metaCache {
	return &metaCache{heads: memory.NewHeads[decodedMeta](maxBytes)}
}

// decode returns the thread's meta decoded from raw, decoding it only
// when raw is not what the cache holds for the thread.
func (c *metaCache) decode(id, raw string) (meta, error) {
	c.mu.Lock()
	kept, ok := c.heads.Get(id)
	c.mu.Unlock()
	if ok && kept.raw == raw {
		return kept.m, nil
	}
	var m meta
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return meta{}, fmt.Errorf("thread %s: decode: %w", id, err)
	}
	head := m.thread()
	size := len(raw) + memory.HeadSize(&head)
	c.mu.Lock()
	c.heads.Put(id, decodedMeta{raw: raw, m: m}, size)
	c.mu.Unlock()
	return m, nil
}

// held is the thread's meta the cache holds decoded, if any: a read
// whose meta is still that one is sent without it (withinScript), and
// takes this one, which the cache may let go of meanwhile.
func (c *metaCache) held(id string) (meta, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept, ok := c.heads.Get(id)
	return kept.m, ok && kept.m.Rev != ""
}
