package redisstore

import (
	"crypto/sha1"
	"encoding/hex"
)

// A Redis that comes back without its last writes (killed between fsyncs,
// a failover to a replica that lagged) keeps a thread's revision: the turn
// count alone cannot tell this process's cached turns from the thread's,
// once another process (a replica of memory) has appended where the lost
// turns were. So the turn cache keeps, with each thread's turns, the digest
// of the last as Redis stored it (memory.TurnCache's tail), set by the
// same read or append that cached them; each read has Redis digest the
// turn at that index (withinScript, or digestLua in a transaction) and
// each append the turn before its own (appendScript). Turns lost are a
// suffix: a different last turn means the cache's are not the thread's,
// and it drops them.

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
