package redisstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// Get reads the thread's hash and the turns appended since the cache last
// saw it, in one round trip, as one transaction (MULTI), so that the two
// are one version's; a second only when the thread was written anew.
func (s *Store) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	t, _, err := s.GetWithin(ctx, id, now, math.MaxInt64)
	return t, err
}

// GetWithin reads the thread as Get does, in a script that reads its turns
// only when its hash says it weighs at most max.
func (s *Store) GetWithin(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, bool, error) {
	t, err := memory.ReadAgain(ctx, func() (*memory.Thread, error) { return s.get(ctx, id, now, max) })
	if err != nil {
		return nil, false, err
	}
	return t, t.Weight > max, nil
}

// scriptedReads bounds the reads made in a script (readFrom): a continued
// call's, whose thread is read within 1 MiB first, and most of whose turns
// the cache holds.
const scriptedReads = 4 << 20

// get is one attempt of GetWithin: a thread that weighs more than max is
// its head alone.
func (s *Store) get(ctx context.Context, id string, now time.Time, max int64) (*memory.Thread, error) {
	rev, seen, want := s.cache.Last(id)
	if seen > 0 && want == "" {
		s.cache.Forget(id) // turns no read checked, which cannot be against Redis's
		seen = 0
	}
	t, m, stored, raw, found, err := s.readFrom(ctx, id, seen, now, max)
	if err != nil || t.Weight > max {
		return t, err
	}
	if seen > 0 && (m.Rev != rev || stored < seen || found != want) {
		// Written anew since the cache saw it, or holding fewer turns than
		// the cache at its revision, or another last cached turn: a Redis
		// back without its last writes (killed between fsyncs, a replica
		// that lagged) lost them, and the cache's are not the thread's,
		// whoever appended since. Either way the turns after seen are not
		// the ones to read.
		if m.Rev == rev {
			s.cache.Forget(id)
		}
		seen = 0
		if t, m, _, raw, _, err = s.readFrom(ctx, id, 0, now, max); err != nil || t.Weight > max {
			return t, err
		}
	}
	count := seen + len(raw)
	tail := want // the digest of the last turn the read answers
	if len(raw) > 0 {
		tail = digest(raw[len(raw)-1])
	}
	t.Turns, err = s.cache.ReadChecked(id, m.Rev, seen, want, count, tail, func(from int) ([]memory.Turn, error) {
		if from >= seen {
			return decodeTurns(ctx, id, raw[from-seen:])
		}
		// The cache holds the turns checked no more (another read or an
		// append changed them meanwhile): read them again, at the
		// revision of the rest.
		_, again, _, more, _, err := s.readFrom(ctx, id, from, now, max)
		if err != nil {
			return nil, err
		}
		// The turn the read's tail digests must still be there: Redis may
		// have lost it since, and another process appended where it was.
		if again.Rev != m.Rev || len(more) < count-from || digest(more[count-from-1]) != tail {
			return nil, fmt.Errorf("thread %s: %w", id, memory.ErrWrittenAnew)
		}
		return decodeTurns(ctx, id, more[:count-from])
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// Head reads the thread's hash and its turn count in one transaction.
func (s *Store) Head(ctx context.Context, id string, now time.Time) (*memory.Thread, int, error) {
	tx := s.rdb.TxPipeline()
	hashCmd := tx.HGetAll(ctx, s.metaKey(id))
	countCmd := tx.LLen(ctx, s.turnsKey(id))
	_, err := tx.Exec(ctx)
	hash, count := hashCmd.Val(), countCmd.Val()
	if transactionRefused(err) { // a full Redis runs a script that only reads: its range of no turns
		hash, count, _, err = threadReply(threadScript.Run(ctx, s.rdb, []string{s.metaKey(id), s.turnsKey(id)}, 1, 0))
	}
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, 0, failure(err)
	}
	if len(hash) == 0 {
		return nil, 0, s.missing(ctx, now)
	}
	t, _, err := s.head(id, hash, now)
	if err != nil {
		return nil, 0, err
	}
	return t, int(count), nil
}

// readFrom reads, in one step, the thread's head, how many turns it holds
// (stored), its turns from index from on (raw), none when the head says it
// weighs more than max, and the digest of turn from-1 (last; "" for
// none), the last of those a cache holds (tails.go). Within a
// bound below scriptedReads, a script (withinScript) that reads the
// thread's weight before its turns; else a transaction, whose turns are
// let go undecoded when the thread weighs more than max (written anew
// since it was weighed): Lua holds a large reply twice, and a read of
// 20 MiB took half as long again.
func (s *Store) readFrom(ctx context.Context, id string, from int, now time.Time, max int64) (t *memory.Thread,
	m meta, stored int, raw []string, last string, err error) {
	keys := []string{s.metaKey(id), s.turnsKey(id)}
	var hash map[string]string
	var count int64
	var held *meta
	if max < scriptedReads {
		rev := ""
		if m, ok := s.metas.held(id); ok {
			held, rev = &m, m.Rev
		}
		hash, count, raw, last, err = withinReply(withinScript.Run(ctx, s.rdb, keys, from, max, rev, from-1))
		if err != nil {
			return nil, meta{}, 0, nil, "", err
		}
	} else {
		tx := s.rdb.TxPipeline()
		hashCmd := tx.HGetAll(ctx, keys[0])
		countCmd := tx.LLen(ctx, keys[1])
		turnsCmd := tx.LRange(ctx, keys[1], int64(from), -1)
		lastCmd := tx.Eval(ctx, digestLua, keys[1:], from-1)
		_, err = tx.Exec(ctx)
		hash, count, raw = hashCmd.Val(), countCmd.Val(), turnsCmd.Val()
		last, _ = lastCmd.Val().(string) // nil: no such turn
		if transactionRefused(err) {
			// From the turn before from, whose digest is last.
			start := from - min(from, 1)
			if hash, count, raw, err = threadReply(threadScript.Run(ctx, s.rdb, keys, start, -1)); err != nil {
				return nil, meta{}, 0, nil, "", err
			}
			if last = ""; from > 0 && len(raw) > 0 {
				last, raw = digest(raw[0]), raw[1:]
			}
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			return nil, meta{}, 0, nil, "", failure(err)
		}
	}
	if len(hash) == 0 {
		return nil, meta{}, 0, nil, "", s.missing(ctx, now) // absent: perhaps lost with Redis's data
	}
	if t, m, err = s.headHeld(id, hash, now, held); err != nil {
		return nil, meta{}, 0, nil, "", err
	}
	if t.Weight > max {
		raw = nil
	}
	return t, m, int(count), raw, last, nil
}

// transactionRefused tells a transaction Redis refused to run because it
// is full: it then refuses every command a MULTI queues, reads too. One
// server answers EXECABORT; go-redis's Cluster client gives the queued
// command's OOM instead.
func transactionRefused(err error) bool {
	return redis.IsExecAbortError(err) || redis.IsOOMError(err)
}

// decode rebuilds a thread; an absent or expired one is not found.
func (s *Store) decode(ctx context.Context, id string, h map[string]string, rawTurns []string,
	now time.Time) (*memory.Thread, error) {
	t, _, err := s.head(id, h, now)
	if err != nil {
		return nil, err
	}
	if t.Turns, err = decodeTurns(ctx, id, rawTurns); err != nil {
		return nil, err
	}
	return t, nil
}

// head rebuilds a thread without its turns from its hash.
func (s *Store) head(id string, h map[string]string, now time.Time) (*memory.Thread, meta, error) {
	return s.headHeld(id, h, now, nil)
}

// headHeld is head for a hash read holding a meta (withinScript), which
// comes without its meta when it is the one held.
func (s *Store) headHeld(id string, h map[string]string, now time.Time, held *meta) (*memory.Thread, meta,
	error) {
	var m meta
	hf := hashFields{h["updated_ns"], h["expires_ms"], h["weight"]}
	if len(h) == 0 || hf.expired(now) {
		return nil, m, memory.ErrNotFound
	}
	if raw, sent := h["meta"]; !sent && held != nil && h["rev"] == held.Rev {
		m = *held
	} else {
		var err error
		if m, err = s.metas.decode(id, raw); err != nil {
			return nil, m, err
		}
	}
	t := hf.thread(m)
	return &t, m, nil
}

// hashFields are what a thread's hash keeps beside its meta: when it was
// last updated (ns), when it expires (ms), and its weight (none before
// weights were kept).
type hashFields struct{ updatedNs, expiresMs, weight string }

func (f hashFields) expired(now time.Time) bool {
	expires, _ := strconv.ParseInt(f.expiresMs, 10, 64)
	return expires <= now.UnixMilli()
}

// thread is the thread m and f describe, without its turns.
func (f hashFields) thread(m meta) memory.Thread {
	updated, _ := strconv.ParseInt(f.updatedNs, 10, 64)
	expires, _ := strconv.ParseInt(f.expiresMs, 10, 64)
	t := m.thread()
	t.Weight, _ = strconv.ParseInt(f.weight, 10, 64)
	t.CreatedAt = m.CreatedAt.UTC()
	t.UpdatedAt, t.ExpiresAt = time.Unix(0, updated).UTC(), time.UnixMilli(expires).UTC()
	return t
}

// thread is the thread m describes, without its turns and the times the
// hash keeps apart.
func (m meta) thread() memory.Thread {
	return memory.Thread{ID: m.ID, ParentID: m.ParentID, ToolName: m.ToolName, ClientID: m.ClientID,
		InitialContext: m.InitialContext}
}

// decodeTurns decodes a thread's stored turns, unless its caller has
// left: go-redis reads a reply to its end whatever ctx says, and the
// decoding after it is as long again, for nobody.
func decodeTurns(ctx context.Context, id string, raw []string) ([]memory.Turn, error) {
	out := make([]memory.Turn, 0, len(raw))
	for _, r := range raw {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		turn, err := decodeTurn(r)
		if err != nil {
			return nil, fmt.Errorf("thread %s: %w", id, err)
		}
		out = append(out, turn)
	}
	return out, nil
}
