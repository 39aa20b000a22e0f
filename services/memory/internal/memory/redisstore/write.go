package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// putScript writes a whole thread. KEYS: the thread's keys. ARGV: replace
// flag, ttl ms, meta JSON, updated_ns, expires_ms, client, file count, file
// shas..., turns... It returns 1 when written, 0 when the id exists (and
// replace is off), -1 when another client's thread holds the id: that one
// is never replaced.
var putScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  if (redis.call('HGET', KEYS[1], 'client') or '') ~= ARGV[6] then return -1 end
  if ARGV[1] == '0' then return 0 end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], 'meta', ARGV[3], 'updated_ns', ARGV[4], 'expires_ms', ARGV[5], 'client', ARGV[6])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
local nf = tonumber(ARGV[7])
if nf > 0 then
  redis.call('SADD', KEYS[3], unpack(ARGV, 8, 7 + nf))
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
if #ARGV > 7 + nf then
  redis.call('RPUSH', KEYS[2], unpack(ARGV, 8 + nf))
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
end
return 1
`)

// appendScript adds an exchange to the client's live thread within the
// limit. KEYS: the thread's keys. ARGV: max turns, now_ms, updated_ns,
// expires_ms, ttl ms, client, keep-until ms, exchange id (empty for none),
// file count, new file shas..., turns... It returns {status, turn count,
// ...}: status -3 absent, -1 expired or another client's, -2 over the
// limit, 1 a retry of a stored
// exchange (then updated_ns and expires_ms follow, to index it by), 0
// stored (then file shas follow). The shas are the thread's files when
// they need keeping alive past expires_ms: files_ms records how far they
// already are, so most appends return none and the caller skips that work.
var appendScript = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'expires_ms', 'client', 'files_ms', 'updated_ns')
if not h[1] then return {-3, 0} end
if tonumber(h[1]) <= tonumber(ARGV[2]) or (h[2] or '') ~= ARGV[6] then return {-1, 0} end
local n = redis.call('LLEN', KEYS[2])
if ARGV[8] ~= '' and redis.call('SISMEMBER', KEYS[4], ARGV[8]) == 1 then return {1, n, h[4], h[1]} end
local nf = tonumber(ARGV[9])
local add = #ARGV - 9 - nf
if n + add > tonumber(ARGV[1]) then return {-2, n} end
redis.call('RPUSH', KEYS[2], unpack(ARGV, 10 + nf))
redis.call('HSET', KEYS[1], 'updated_ns', ARGV[3], 'expires_ms', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
if ARGV[8] ~= '' then redis.call('SADD', KEYS[4], ARGV[8]) end
if redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[5]) end
local out = {0, n + add}
if nf > 0 then
  redis.call('SADD', KEYS[3], unpack(ARGV, 10, 9 + nf))
  redis.call('HDEL', KEYS[1], 'files_ms')
  h[3] = false
end
if redis.call('EXISTS', KEYS[3]) == 1 then
  redis.call('PEXPIRE', KEYS[3], ARGV[5])
  if not h[3] or tonumber(h[3]) < tonumber(ARGV[4]) then
    redis.call('HSET', KEYS[1], 'files_ms', ARGV[7])
    for i, f in ipairs(redis.call('SMEMBERS', KEYS[3])) do out[i + 2] = f end
  end
end
return out
`)

// fileSHAs lists the distinct files turns reference.
func fileSHAs(turns []memory.Turn) []any {
	seen := map[string]bool{}
	var out []any
	for _, t := range turns {
		for _, f := range t.Files {
			if f.SHA256 != "" && !seen[f.SHA256] {
				seen[f.SHA256] = true
				out = append(out, f.SHA256)
			}
		}
	}
	return out
}

func (s *Store) encodeTurns(args []any, turns []memory.Turn) ([]any, error) {
	for _, turn := range turns {
		enc, err := s.encodeTurn(turn)
		if err != nil {
			return nil, err
		}
		args = append(args, enc)
	}
	return args, nil
}

func (s *Store) put(ctx context.Context, t *memory.Thread, replace bool) error {
	m, err := json.Marshal(meta{ID: t.ID, ParentID: t.ParentID, ToolName: t.ToolName, ClientID: t.ClientID,
		CreatedAt: t.CreatedAt, InitialContext: t.InitialContext})
	if err != nil {
		return fmt.Errorf("encode thread %s: %w", t.ID, err)
	}
	life := ttl(t.UpdatedAt, t.ExpiresAt)
	flag := "0"
	if replace {
		flag = "1"
	}
	shas := fileSHAs(t.Turns)
	args := []any{flag, life, string(m), strconv.FormatInt(t.UpdatedAt.UnixNano(), 10), t.ExpiresAt.UnixMilli(),
		t.ClientID, len(shas)}
	if args, err = s.encodeTurns(append(args, shas...), t.Turns); err != nil {
		return err
	}
	created, err := putScript.Run(ctx, s.rdb, s.threadKeys(t.ID), args...).Int()
	if err != nil {
		return unavailable(err)
	}
	switch created {
	case 0:
		return fmt.Errorf("%w: %s", memory.ErrExists, t.ID)
	case -1:
		return fmt.Errorf("%w: %s", memory.ErrOwned, t.ID)
	}
	pipe := s.rdb.Pipeline()
	s.index(ctx, pipe, t.ClientID, t.ID, t.UpdatedAt, t.ExpiresAt, t.UpdatedAt)
	_, err = pipe.Exec(ctx)
	return unavailable(err)
}

func (s *Store) Create(ctx context.Context, t *memory.Thread) error { return s.put(ctx, t, false) }

func (s *Store) Append(ctx context.Context, id, clientID, exchangeID string, turns []memory.Turn, maxTurns int,
	now, expiresAt time.Time) (int, error) {
	life := ttl(now, expiresAt)
	// Files are kept a quarter TTL past the thread, so the appends in that
	// window need not touch them again.
	keepUntil := expiresAt.Add(time.Duration(life) * time.Millisecond / 4)
	shas := fileSHAs(turns)
	args := []any{maxTurns, now.UnixMilli(), strconv.FormatInt(now.UnixNano(), 10), expiresAt.UnixMilli(), life,
		clientID, keepUntil.UnixMilli(), exchangeID, len(shas)}
	args, err := s.encodeTurns(append(args, shas...), turns)
	if err != nil {
		return 0, err
	}
	res, err := appendScript.Run(ctx, s.rdb, s.threadKeys(id), args...).Slice()
	if err != nil {
		return 0, unavailable(err)
	}
	status, _ := res[0].(int64)
	count, _ := res[1].(int64)
	// The thread's files and its client's index live in other slots:
	// extend and update them in one round trip after the atomic append.
	pipe := s.rdb.Pipeline()
	switch status {
	case -3:
		return 0, s.missing(ctx, now)
	case -1:
		return 0, memory.ErrNotFound
	case -2:
		return int(count), memory.ErrTurnLimit
	case 1:
		// A retry: the first attempt may have failed after its append and
		// before this index update, so index it again, as stored.
		updated, _ := strconv.ParseInt(str(res[2]), 10, 64)
		expires, _ := strconv.ParseInt(str(res[3]), 10, 64)
		s.index(ctx, pipe, clientID, id, time.Unix(0, updated), time.UnixMilli(expires), now)
	default:
		keepLife := ttl(now, keepUntil)
		for _, sha := range res[2:] {
			blobScript.Eval(ctx, pipe, []string{s.blobKey(str(sha))}, keepLife, keepUntil.UnixMilli(), "0", "", "")
		}
		s.index(ctx, pipe, clientID, id, now, expiresAt, now)
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return int(count), unavailable(err)
	}
	return int(count), nil
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func (s *Store) Delete(ctx context.Context, id string) error {
	client, err := s.rdb.HGet(ctx, s.metaKey(id), "client").Result()
	if err != nil && !errors.Is(err, redis.Nil) {
		return unavailable(err)
	}
	n, err := s.rdb.Del(ctx, s.threadKeys(id)...).Result()
	if err != nil {
		return unavailable(err)
	}
	if n == 0 {
		return memory.ErrNotFound
	}
	// Only a listing misses the entry when this fails, and tidies it then.
	s.unindex(ctx, client, id)
	return nil
}

// Import checks every thread before it writes any, so a clash stores
// nothing. Each thread is written atomically; a Redis failure part way
// leaves the threads written so far, which an import with replace redoes.
func (s *Store) Import(ctx context.Context, threads []*memory.Thread, replace bool) error {
	pipe := s.rdb.Pipeline()
	owners := make([]*redis.StringCmd, len(threads))
	for i, t := range threads {
		owners[i] = pipe.HGet(ctx, s.metaKey(t.ID), "client")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return unavailable(err)
	}
	for i, t := range threads {
		// A thread's meta always has its client field (put writes it, ""
		// included), so a missing field means a missing thread.
		owner, err := owners[i].Result()
		if err := memory.ImportClash(t, owner, !errors.Is(err, redis.Nil), replace); err != nil {
			return err
		}
	}
	for _, t := range threads {
		if err := s.put(ctx, t, replace); err != nil {
			return err
		}
	}
	return nil
}
