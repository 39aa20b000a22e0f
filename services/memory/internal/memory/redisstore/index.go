package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// Each client has an index of its own, so a listing reads that client's
// threads only, however many other clients share the Redis. The index is
// two sorted sets under one hash tag (one Cluster slot, so one script
// keeps both): ids by last update, to list newest first, and the same ids
// by expiry, to sweep out threads that expired. On one server the write
// script updates the index too (see scripts.go); in Cluster a thread's
// keys live in the thread's own slot, so the index is updated right after
// each write. An entry whose thread is gone is only missing from a
// listing, which tidies it when it meets it.

// clientKeys are the client's index: ids by last update, then by expiry.
// The tag is a digest so that any identity, braces and all, makes one
// well-formed tag of bounded length.
func (s *Store) clientKeys(client string) []string {
	sum := sha256.Sum256([]byte(client))
	base := s.prefix + "client:{" + hex.EncodeToString(sum[:12]) + "}:"
	return []string{base + "updated", base + "expires"}
}

// sweepBatch bounds how many expired entries one write sweeps out.
const sweepBatch = 100

func score(t time.Time) float64 { return float64(t.UnixMicro()) }

// index queues, on pipe, recording the client's thread as updated at
// updated and expiring at expires, as seen at now.
func (s *Store) index(ctx context.Context, pipe redis.Pipeliner, client, id string, updated, expires, now time.Time) {
	indexScript.Eval(ctx, pipe, s.clientKeys(client), score(updated), id, expires.UnixMilli(), now.UnixMilli(),
		ttl(now, expires))
}

// unindex removes threads from the client's index, as well as it can.
func (s *Store) unindex(ctx context.Context, client string, ids ...any) {
	pipe := s.rdb.Pipeline()
	for _, k := range s.clientKeys(client) {
		pipe.ZRem(ctx, k, ids...)
	}
	_, _ = pipe.Exec(ctx)
}

// listed is a thread as a listing reads it (listScript): without its
// turns, with how many it has and its first prompt.
type listed struct {
	thread *memory.Thread
	turns  int64
	prompt string
}

// list walks the client's index newest first, reading a batch of threads
// in one pipeline at a time, until it has p.Limit live threads that match
// p or the index ends.
func (s *Store) list(ctx context.Context, p memory.ListParams, now time.Time) ([]listed, error) {
	maxScore := "+inf"
	if p.After != nil {
		maxScore = strconv.FormatFloat(score(p.After.UpdatedAt), 'f', 0, 64)
	}
	batch := int64(max(p.Limit, 20))
	var out []listed
	var stale []any
	byUpdate := s.clientKeys(p.ClientID)[0]
	for offset := int64(0); len(out) < p.Limit; offset += batch {
		entries, err := s.rdb.ZRevRangeByScoreWithScores(ctx, byUpdate,
			&redis.ZRangeBy{Max: maxScore, Min: "-inf", Offset: offset, Count: batch}).Result()
		if err != nil {
			return nil, failure(err)
		}
		type reads struct {
			id   string
			read *redis.Cmd
		}
		var batchReads []reads
		pipe := s.rdb.Pipeline()
		for _, e := range entries {
			id, _ := e.Member.(string)
			if p.After != nil && e.Score == score(p.After.UpdatedAt) && id >= p.After.ID {
				continue
			}
			// A script each, so that what it reads of a thread is one
			// version's; the pipeline spans slots, which one MULTI cannot.
			read := listScript.Eval(ctx, pipe, []string{s.metaKey(id), s.turnsKey(id)})
			batchReads = append(batchReads, reads{id: id, read: read})
		}
		if len(batchReads) > 0 {
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return nil, failure(err)
			}
		}
		for _, r := range batchReads {
			l, err := s.listedReply(ctx, r.read, r.id, now)
			if errors.Is(err, memory.ErrNotFound) {
				stale = append(stale, r.id)
				continue
			}
			if err != nil {
				return nil, err
			}
			if t := l.thread; t.ClientID == p.ClientID && (p.ToolName == "" || t.ToolName == p.ToolName) {
				out = append(out, l)
				if len(out) == p.Limit {
					break
				}
			}
		}
		if int64(len(entries)) < batch {
			break
		}
	}
	if len(stale) > 0 {
		s.unindex(ctx, p.ClientID, stale...) // expired or deleted
	}
	return out, nil
}

// Summaries reads what a listing shows of each thread (listScript), never
// its turns.
func (s *Store) Summaries(ctx context.Context, p memory.ListParams, now time.Time) ([]memory.Summary, error) {
	threads, err := s.list(ctx, p, now)
	out := make([]memory.Summary, len(threads))
	for i, t := range threads {
		out[i] = memory.Summary{Thread: *t.thread, TurnCount: int(t.turns), FirstPrompt: t.prompt}
	}
	return out, err
}

// threadScript reads a thread in one step: its hash, its turn count and
// its turns from index ARGV[1] to ARGV[2]. A listing reads it so, and so
// does Get when Redis is full: a script that only reads runs then, where a
// transaction does not. KEYS: metaKey, turnsKey.
var threadScript = redis.NewScript(`
return {redis.call('HGETALL', KEYS[1]), redis.call('LLEN', KEYS[2]),
  redis.call('LRANGE', KEYS[2], ARGV[1], ARGV[2])}
`)

// withinScript reads a thread as threadScript does, its turns from index
// ARGV[1] on, but none when its weight is past ARGV[2]: GetWithin. A
// thread written before weights were kept weighs nothing here. Its hash
// comes without the meta when the meta's revision is ARGV[3], which the
// reader holds decoded (metaCache.held): the meta holds the first call's
// arguments, and the thread is written anew whenever it changes. The hash
// then holds only what a read takes from it (Store.headHeld). It answers
// too the digest of turn ARGV[4] (none for -1): the last the reader's cache
// holds (tails.go). Scripts that only read run in a full Redis too. KEYS:
// metaKey, turnsKey.
var withinScript = redis.NewScript(`
local turns = {}
local last = false
if tonumber(ARGV[4]) >= 0 then
  local t = redis.call('LINDEX', KEYS[2], ARGV[4])
  if t then last = redis.sha1hex(t) end
end
if tonumber(redis.call('HGET', KEYS[1], 'weight') or '0') <= tonumber(ARGV[2]) then
  turns = redis.call('LRANGE', KEYS[2], ARGV[1], -1)
end
local hash
if ARGV[3] ~= '' and redis.call('HGET', KEYS[1], 'rev') == ARGV[3] then
  hash = {}
  local fields = {'rev', 'updated_ns', 'expires_ms', 'weight'}
  local values = redis.call('HMGET', KEYS[1], unpack(fields))
  for i, f in ipairs(fields) do
    if values[i] then
      hash[#hash + 1] = f
      hash[#hash + 1] = values[i]
    end
  end
else
  hash = redis.call('HGETALL', KEYS[1])
end
return {hash, redis.call('LLEN', KEYS[2]), turns, last}
`)

// withinReply takes withinScript's reply apart: threadScript's, and the
// digest of the turn it was asked for ("" for none).
func withinReply(cmd *redis.Cmd) (meta map[string]string, count int64, turns []string, last string, err error) {
	reply, err := cmd.Slice()
	if err != nil {
		return nil, 0, nil, "", failure(err)
	}
	if len(reply) != 4 {
		return nil, 0, nil, "", fmt.Errorf("the thread's script answered %v, not a thread's hash, count, turns "+
			"and a digest", reply)
	}
	last, _ = reply[3].(string) // nil: no such turn
	meta, count, turns, err = threadReply(redis.NewCmdResult(reply[:3], nil))
	return meta, count, turns, last, err
}

// threadReply takes threadScript's reply apart. A reply of another shape
// is an error, never an empty thread: a listing drops the threads it finds
// gone from their client's index, and a read would call it missing.
func threadReply(cmd *redis.Cmd) (meta map[string]string, count int64, turns []string, err error) {
	reply, err := cmd.Slice()
	if err != nil {
		return nil, 0, nil, failure(err)
	}
	bad := func() (map[string]string, int64, []string, error) {
		return nil, 0, nil, fmt.Errorf("the thread's script answered %v, not a thread's hash, count and turns",
			reply)
	}
	if len(reply) != 3 {
		return bad()
	}
	fields, ok1 := reply[0].([]any)
	count, ok2 := reply[1].(int64)
	listedTurns, ok3 := reply[2].([]any)
	if !ok1 || !ok2 || !ok3 || len(fields)%2 != 0 {
		return bad()
	}
	meta = make(map[string]string, len(fields)/2)
	for i := 0; i < len(fields); i += 2 {
		k, ok1 := fields[i].(string)
		v, ok2 := fields[i+1].(string)
		if !ok1 || !ok2 {
			return bad()
		}
		meta[k] = v
	}
	turns = make([]string, len(listedTurns))
	for i, t := range listedTurns {
		var ok bool
		if turns[i], ok = t.(string); !ok {
			return bad()
		}
	}
	return meta, count, turns, nil
}

// weighBatch is how many of a client's threads ClientWeight reads in one
// round trip.
const weighBatch = 1000

// ClientWeight reads the weight, expiry and owner of each thread the
// client's index holds, a batch a round trip: the index may still hold a
// thread that expired or went, and a thread's expiry is its own hash's (an
// index that failed to follow an append in Cluster holds an older one).
// Batches go by rank, so an append that moves a thread to the index's end
// meanwhile has one thread counted twice and another missed: the bound it
// serves is kept to within a thread or two.
func (s *Store) ClientWeight(ctx context.Context, clientID string, now time.Time) (int64, error) {
	byExpiry := s.clientKeys(clientID)[1]
	var total int64
	for start := int64(0); ; start += weighBatch {
		ids, err := s.rdb.ZRange(ctx, byExpiry, start, start+weighBatch-1).Result()
		if err != nil {
			return 0, failure(err)
		}
		pipe := s.rdb.Pipeline()
		heads := make([]*redis.SliceCmd, len(ids))
		for i, id := range ids {
			heads[i] = pipe.HMGet(ctx, s.metaKey(id), "weight", "expires_ms", "client")
		}
		if len(ids) > 0 {
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return 0, failure(err)
			}
		}
		for _, h := range heads {
			f := h.Val()
			if len(f) != 3 || f[2] != clientID {
				continue // gone, or written anew as another's
			}
			expires, _ := strconv.ParseInt(fmt.Sprint(f[1]), 10, 64)
			if expires <= now.UnixMilli() {
				continue
			}
			w, _ := strconv.ParseInt(fmt.Sprint(f[0]), 10, 64)
			total += w + memory.ThreadOverhead
		}
		if len(ids) < weighBatch {
			return total, nil
		}
	}
}
