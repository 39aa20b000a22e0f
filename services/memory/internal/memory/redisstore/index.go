package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
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

// listed is a thread as a listing reads it: with all its turns, or only
// the first ones, and how many it has.
type listed struct {
	thread *memory.Thread
	turns  int64
}

// list walks the client's index newest first, reading a batch of threads
// in one pipeline at a time, until it has p.Limit live threads that match
// p or the index ends. lastTurn is the index of the last turn each thread
// is read with: -1 for all of them.
func (s *Store) list(ctx context.Context, p memory.ListParams, now time.Time, lastTurn int64) ([]listed, error) {
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
			return nil, unavailable(err)
		}
		type reads struct {
			id    string
			meta  *redis.MapStringStringCmd
			count *redis.IntCmd
			turns *redis.StringSliceCmd
		}
		var batchReads []reads
		pipe := s.rdb.Pipeline()
		for _, e := range entries {
			id, _ := e.Member.(string)
			if p.After != nil && e.Score == score(p.After.UpdatedAt) && id >= p.After.ID {
				continue
			}
			batchReads = append(batchReads, reads{id: id, meta: pipe.HGetAll(ctx, s.metaKey(id)),
				count: pipe.LLen(ctx, s.turnsKey(id)), turns: pipe.LRange(ctx, s.turnsKey(id), 0, lastTurn)})
		}
		if len(batchReads) > 0 {
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return nil, unavailable(err)
			}
		}
		for _, r := range batchReads {
			t, err := s.decode(r.id, r.meta.Val(), r.turns.Val(), now)
			if errors.Is(err, memory.ErrNotFound) {
				stale = append(stale, r.id)
				continue
			}
			if err != nil {
				return nil, err
			}
			if t.ClientID == p.ClientID && (p.ToolName == "" || t.ToolName == p.ToolName) {
				out = append(out, listed{thread: t, turns: r.count.Val()})
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

func (s *Store) List(ctx context.Context, p memory.ListParams, now time.Time) ([]*memory.Thread, error) {
	threads, err := s.list(ctx, p, now, -1)
	out := make([]*memory.Thread, len(threads))
	for i, t := range threads {
		out[i] = t.thread
	}
	return out, err
}

// Summaries reads each thread's metadata, turn count and first two turns,
// never its whole history.
func (s *Store) Summaries(ctx context.Context, p memory.ListParams, now time.Time) ([]memory.Summary, error) {
	threads, err := s.list(ctx, p, now, 1)
	out := make([]memory.Summary, len(threads))
	for i, t := range threads {
		out[i] = memory.Summary{Thread: *t.thread, TurnCount: int(t.turns), FirstPrompt: memory.FirstPrompt(t.thread.Turns)}
		out[i].Thread.Turns = nil
	}
	return out, err
}
