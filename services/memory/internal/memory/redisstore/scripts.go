package redisstore

import (
	"strconv"

	"github.com/redis/go-redis/v9"
)

// A write is one script: creating or appending to a thread, and, on one
// server, recording it in its client's index too.
//
// Each script's first write is a command that a Redis full under
// noeviction refuses (HSET, RPUSH, ZADD): such a Redis refuses a script at
// its first call of a write command that may take memory, and once a
// script has called any write command (a DEL, a PEXPIRE, even one that
// changed nothing) it lets every later one through, past maxmemory. So a
// full Redis refuses a write whole, before it changed anything. putScript
// writes the thread's hash first, then clears the keys of the thread it
// replaces, then writes the hash again. Cluster keeps a thread
// and its client's index in different slots, which no script may span; there
// the index is updated right after, in a second round trip (see index.go).
// A thread's scripts are given the index keys as KEYS[5] and KEYS[6] when
// they are to update it.

// indexLua records a thread in its client's index and sweeps out entries
// that expired. Both keys live at least as long as the thread: a client's
// index must outlive its longest-lived thread.
var indexLua = `
local function index(byUpdate, byExpiry, score, id, expiresMs, nowMs, life)
  redis.call('ZADD', byUpdate, score, id)
  redis.call('ZADD', byExpiry, expiresMs, id)
  local gone = redis.call('ZRANGEBYSCORE', byExpiry, '-inf', nowMs, 'LIMIT', 0, ` + strconv.Itoa(sweepBatch) + `)
  if #gone > 0 then
    redis.call('ZREM', byUpdate, unpack(gone))
    redis.call('ZREM', byExpiry, unpack(gone))
  end
  for _, k in ipairs({byUpdate, byExpiry}) do
    if redis.call('PTTL', k) < tonumber(life) then redis.call('PEXPIRE', k, life) end
  end
end
`

// chunksLua calls a command with ARGV[from..to] after key, a thousand
// values at a time: Lua's unpack passes at most about 8,000, fewer than a
// thread may hold turns (MAX_CONVERSATION_TURNS) or an exchange files.
var chunksLua = `
local function inChunks(cmd, key, from, to)
  for i = from, to, 1000 do
    redis.call(cmd, key, unpack(ARGV, i, math.min(i + 999, to)))
  end
end
`

// indexScript is indexLua on its own. KEYS: clientKeys. ARGV: update
// score, id, expires_ms, now_ms, ttl ms.
var indexScript = redis.NewScript(indexLua + `
index(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])
return 1
`)

// putScript writes a whole thread. KEYS: the thread's keys, then the
// client's index keys to update it. ARGV: replace flag, ttl ms, meta JSON,
// updated_ns, expires_ms, client, update score, id, updated_ms, weight,
// file count, the meta's revision, the card (listed.go), the first prompt,
// the first turn's role, the count of the state values that follow, those
// values (a tool and its state field, as appendScript keeps it: statesOf),
// file shas..., turns... It returns 1 when written, 0 when the id exists
// (and replace is off), -1 when another client's thread holds the id: that
// one is never replaced. A thread whose meta is this write's (its
// revision is new to each write) was written by this very script, run
// again: go-redis sends a script again when its reply comes later than
// the read timeout, and the first run has written it.
var putScript = redis.NewScript(indexLua + chunksLua + `
if redis.call('EXISTS', KEYS[1]) == 1 then
  if (redis.call('HGET', KEYS[1], 'client') or '') ~= ARGV[6] then return -1 end
  if ARGV[1] == '0' then
    if redis.call('HGET', KEYS[1], 'meta') == ARGV[3] then return 1 end
    return 0
  end
end
local head = {'meta', ARGV[3], 'rev', ARGV[12], 'updated_ns', ARGV[4], 'expires_ms', ARGV[5], 'client', ARGV[6],
  'weight', ARGV[10], 'card', ARGV[13], 'prompt', ARGV[14], 'first', ARGV[15]}
local ns = tonumber(ARGV[16])
for i = 17, 16 + ns, 2 do
  head[#head + 1] = 'state:' .. ARGV[i]
  head[#head + 1] = ARGV[i + 1]
end
redis.call('HSET', KEYS[1], unpack(head))
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], unpack(head))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local nf = tonumber(ARGV[11])
local shas = 17 + ns
if nf > 0 then
  inChunks('SADD', KEYS[3], shas, shas + nf - 1)
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
if #ARGV >= shas + nf then
  inChunks('RPUSH', KEYS[2], shas + nf, #ARGV)
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
if #KEYS > 4 then index(KEYS[5], KEYS[6], ARGV[7], ARGV[8], ARGV[5], ARGV[9], ARGV[2]) end
return 1
`)

// appendScript adds an exchange to the client's live thread within the
// limit, reading the thread's hash and its turn count, never its turns.
// KEYS: the thread's keys, then the client's index keys to update it.
// ARGV: max turns, now_ms, updated_ns, expires_ms, ttl ms, client,
// keep-until ms, exchange id (empty for none), update score, id, file
// count, the turns' weight, the thread's most, the first prompt of a
// thread without turns, the first new turn's role, the first prompt of a
// thread whose one turn is not the user's, the turn count after which no
// other state of the tool may be (empty for no check:
// memory.Exchange.Unchanged), the tool whose workflow state the turns keep
// (empty for none), new file shas..., turns...
// It returns {status, turn count, ...}: status -3 absent, -1 expired or
// another client's, -2 over the turn limit, -4 over the weight, -5 a
// state of the tool stored after the turns the call saw, 1 a
// retry of a stored exchange (then updated_ns and expires_ms follow, to
// index it by when the index is the caller's to update), 0 stored (then
// the digest of the turn before the new ones, empty for none, and file shas
// follow). The shas are the thread's files when they need
// keeping alive past expires_ms: files_ms records how far they already
// are, so most appends return none and the caller skips that work.
var appendScript = redis.NewScript(indexLua + chunksLua + `
local h = redis.call('HMGET', KEYS[1], 'expires_ms', 'client', 'files_ms', 'updated_ns', 'weight')
if not h[1] then return {-3, 0} end
if tonumber(h[1]) <= tonumber(ARGV[2]) or (h[2] or '') ~= ARGV[6] then return {-1, 0} end
local n = redis.call('LLEN', KEYS[2])
if ARGV[8] ~= '' and redis.call('SISMEMBER', KEYS[4], ARGV[8]) == 1 then return {1, n, h[4], h[1]} end
local nf = tonumber(ARGV[11])
local add = #ARGV - 18 - nf
if n + add > tonumber(ARGV[1]) then return {-2, n} end
local weight = tonumber(h[5] or '0') + tonumber(ARGV[12])
if weight > tonumber(ARGV[13]) then return {-4, n} end
-- A tool's state field is the turn count its last state was stored with.
if ARGV[17] ~= '' and tonumber(redis.call('HGET', KEYS[1], 'state:' .. ARGV[18]) or '0') > tonumber(ARGV[17]) then
  return {-5, n}
end
inChunks('RPUSH', KEYS[2], 19 + nf, #ARGV)
redis.call('HSET', KEYS[1], 'updated_ns', ARGV[3], 'expires_ms', ARGV[4], 'weight', weight)
if ARGV[18] ~= '' then redis.call('HSET', KEYS[1], 'state:' .. ARGV[18], n + add) end
if n < 2 and redis.call('HEXISTS', KEYS[1], 'card') == 1 then
  if n == 0 then
    redis.call('HSET', KEYS[1], 'prompt', ARGV[14], 'first', ARGV[15])
  elseif redis.call('HGET', KEYS[1], 'first') ~= '` + userRole + `' then
    redis.call('HSET', KEYS[1], 'prompt', ARGV[16])
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
if ARGV[8] ~= '' then redis.call('SADD', KEYS[4], ARGV[8]) end
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[5]) end
if #KEYS > 4 then index(KEYS[5], KEYS[6], ARGV[9], ARGV[10], ARGV[4], ARGV[2], ARGV[5]) end
-- What the turn before the new ones is, for the caller's cache (tails.go).
local prev = ''
if n > 0 then prev = redis.sha1hex(redis.call('LINDEX', KEYS[2], n - 1)) end
local out = {0, n + add, prev}
if nf > 0 then
  inChunks('SADD', KEYS[3], 19, 18 + nf)
  redis.call('HDEL', KEYS[1], 'files_ms')
  h[3] = false
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
  if not h[3] or tonumber(h[3]) < tonumber(ARGV[4]) then
    redis.call('HSET', KEYS[1], 'files_ms', ARGV[7])
    for i, f in ipairs(redis.call('SMEMBERS', KEYS[3])) do out[i + 3] = f end
  end
end
return out
`)
