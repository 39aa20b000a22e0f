package redisstore

import (
	"crypto/sha1"
	"encoding/hex"
	"sync"
)

// A Redis that comes back without its last writes (killed between fsyncs,
// a failover to a replica that lagged) keeps a thread's revision: the turn
// count alone cannot tell this process's cached turns from the thread's,
// once another process (a replica of memory) has appended where the lost
// turns were. So the store keeps, for each thread whose turns its cache
// holds, a digest of the last cached turn as Redis stored it, and each
// read has Redis digest the turn at that index (withinScript) or reads it
// (a transaction): turns lost are a suffix, and a different last turn
// means the cache's are not the thread's.

// maxTails bounds the threads whose last turn's digest is kept: a thread
// without one is read whole, its cached turns forgotten.
const maxTails = 100_000

// tailDigests are the digests of the last turn the cache holds of each
// thread, at a revision and a count.
type tailDigests struct {
	mu    sync.Mutex
	tails map[string]tail
}

type tail struct {
	rev    string
	count  int
	digest string
}

func newTailDigests() *tailDigests { return &tailDigests{tails: map[string]tail{}} }

// get is the digest of the thread's turn count-1 when the cache holds
// count turns of it at rev.
func (d *tailDigests) get(id, rev string, count int) (string, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	t, ok := d.tails[id]
	if !ok || t.rev != rev || t.count != count {
		return "", false
	}
	return t.digest, true
}

// put records that the thread's turn count-1, at rev, is stored as raw.
func (d *tailDigests) put(id, rev string, count int, raw string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if len(d.tails) >= maxTails {
		clear(d.tails) // the threads read again whole once, then kept again
	}
	d.tails[id] = tail{rev: rev, count: count, digest: digest(raw)}
}

// digest is what Redis's redis.sha1hex answers for raw.
func digest(raw string) string {
	sum := sha1.Sum([]byte(raw))
	return hex.EncodeToString(sum[:])
}

// digestLua answers the digest of turn ARGV[1] of the turns at KEYS[1], or
// nil when there is none (ARGV[1] is -1 for none asked): a transaction's
// part of what withinScript answers. KEYS: turnsKey.
const digestLua = `
if tonumber(ARGV[1]) < 0 then return false end
local t = redis.call('LINDEX', KEYS[1], ARGV[1])
if t then return redis.sha1hex(t) end
return false
`
