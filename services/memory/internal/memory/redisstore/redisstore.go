// Package redisstore keeps threads in Redis, for clusters of zen replicas.
//
// Key layout (prefix defaults to "zen:"; the braces are a Cluster hash tag,
// so one thread's keys live in one slot and scripts can touch both):
//
//	zen:{<thread id>}:meta   hash: meta (JSON of the thread without turns),
//	                         client, updated_ns, expires_ms
//	zen:{<thread id>}:turns  list: one JSON turn per element, gzip'd when
//	                         compression is on and the turn is large
//	zen:{<thread id>}:files  set: sha256 of every file the turns reference
//	zen:index                sorted set: thread ids scored by last update
//	                         (microseconds), for listing
//	zen:blob:<sha256>        hash: content (gzip'd when compression is on
//	                         and it is large), tokens (JSON), expires_ms
//
// Every key has a TTL: a thread's keys expire with the thread, and the
// index lives as long as its newest thread. Create and append are Lua
// scripts, so concurrent writers never lose a turn and a rejected append
// changes nothing.
package redisstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// compressAbove is the turn size from which compression pays off.
const compressAbove = 1024

// Store is a memory.Store in Redis.
type Store struct {
	rdb      redis.UniversalClient
	prefix   string
	compress bool
}

var _ memory.Store = (*Store)(nil)

// New wraps a client. prefix namespaces every key ("zen:" when empty).
func New(rdb redis.UniversalClient, prefix string, compress bool) *Store {
	if prefix == "" {
		prefix = "zen:"
	}
	return &Store{rdb: rdb, prefix: prefix, compress: compress}
}

// Open connects to the Redis at url: a plain redis:// or rediss:// URL for
// one server, with ?master_name=<name> for Sentinel (extra sentinels as
// &addr=host:port), or with ?cluster=true for Cluster (extra nodes as
// &addr=host:port).
func Open(rawURL, prefix string, compress bool) (*Store, error) {
	rdb, err := client(rawURL)
	if err != nil {
		return nil, err
	}
	return New(rdb, prefix, compress), nil
}

func client(rawURL string) (redis.UniversalClient, error) {
	base, query, _ := strings.Cut(rawURL, "?")
	var rest []string
	cluster, sentinel := false, false
	for _, kv := range strings.Split(query, "&") {
		switch {
		case kv == "":
		case kv == "cluster=true":
			cluster = true
		case kv == "cluster=false":
		default:
			sentinel = sentinel || strings.HasPrefix(kv, "master_name=")
			rest = append(rest, kv)
		}
	}
	u := base
	if len(rest) > 0 {
		u += "?" + strings.Join(rest, "&")
	}
	switch {
	case cluster:
		opts, err := redis.ParseClusterURL(u)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		return redis.NewClusterClient(opts), nil
	case sentinel:
		opts, err := redis.ParseFailoverURL(u)
		if err != nil {
			return nil, fmt.Errorf("REDIS_URL: %w", err)
		}
		return redis.NewFailoverClient(opts), nil
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		return nil, fmt.Errorf("REDIS_URL: %w", err)
	}
	return redis.NewClient(opts), nil
}

func (s *Store) metaKey(id string) string  { return s.prefix + "{" + id + "}:meta" }
func (s *Store) turnsKey(id string) string { return s.prefix + "{" + id + "}:turns" }
func (s *Store) filesKey(id string) string { return s.prefix + "{" + id + "}:files" }

func (s *Store) threadKeys(id string) []string {
	return []string{s.metaKey(id), s.turnsKey(id), s.filesKey(id)}
}
func (s *Store) indexKey() string          { return s.prefix + "index" }
func (s *Store) blobKey(sha string) string { return s.prefix + "blob:" + sha }

// unavailable marks Redis failures as retryable.
func unavailable(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%w: redis: %v", memory.ErrUnavailable, err)
}

// ttl is how long keys live: until expiresAt as seen from now, at least
// one millisecond (a zero or negative TTL would delete at once).
func ttl(now, expiresAt time.Time) int64 {
	return max(1, expiresAt.Sub(now).Milliseconds())
}

func score(t time.Time) float64 { return float64(t.UnixMicro()) }

// meta is what the hash keeps besides the turns.
type meta struct {
	ID             string         `json:"thread_id"`
	ParentID       string         `json:"parent_thread_id,omitempty"`
	ToolName       string         `json:"tool_name"`
	ClientID       string         `json:"client_id,omitempty"`
	CreatedAt      time.Time      `json:"created_at"`
	InitialContext map[string]any `json:"initial_context,omitempty"`
}

// putScript writes a whole thread. ARGV: replace flag, ttl ms, meta JSON,
// updated_ns, expires_ms, client, file count, file shas..., turns... It
// returns 1 when written, 0 when the id exists (and replace is off), -1
// when another client's thread holds the id: that one is never replaced.
var putScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then
  if (redis.call('HGET', KEYS[1], 'client') or '') ~= ARGV[6] then return -1 end
  if ARGV[1] == '0' then return 0 end
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
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
// limit. ARGV: max turns, now_ms, updated_ns, expires_ms, ttl ms, client,
// keep-until ms, file count, new file shas..., turns... It returns {status,
// turn count, file shas...}: status -1 not found, -2 over the limit. The
// shas are the thread's files when they need keeping alive past
// expires_ms: files_ms records how far they already are, so most appends
// return none and the caller skips that work.
var appendScript = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'expires_ms', 'client', 'files_ms')
if not h[1] or tonumber(h[1]) <= tonumber(ARGV[2]) or (h[2] or '') ~= ARGV[6] then return {-1, 0} end
local nf = tonumber(ARGV[8])
local n = redis.call('LLEN', KEYS[2])
local add = #ARGV - 8 - nf
if n + add > tonumber(ARGV[1]) then return {-2, n} end
redis.call('RPUSH', KEYS[2], unpack(ARGV, 9 + nf))
redis.call('HSET', KEYS[1], 'updated_ns', ARGV[3], 'expires_ms', ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
local out = {0, n + add}
if nf > 0 then
  redis.call('SADD', KEYS[3], unpack(ARGV, 9, 8 + nf))
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

func (s *Store) put(ctx context.Context, t *memory.Thread, replace bool) error {
	m, err := json.Marshal(meta{ID: t.ID, ParentID: t.ParentID, ToolName: t.ToolName, ClientID: t.ClientID, CreatedAt: t.CreatedAt, InitialContext: t.InitialContext})
	if err != nil {
		return fmt.Errorf("encode thread %s: %w", t.ID, err)
	}
	life := ttl(t.UpdatedAt, t.ExpiresAt)
	flag := "0"
	if replace {
		flag = "1"
	}
	shas := fileSHAs(t.Turns)
	args := []any{flag, life, string(m), strconv.FormatInt(t.UpdatedAt.UnixNano(), 10), t.ExpiresAt.UnixMilli(), t.ClientID, len(shas)}
	args = append(args, shas...)
	for _, turn := range t.Turns {
		enc, err := s.encodeTurn(turn)
		if err != nil {
			return err
		}
		args = append(args, enc)
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
	return s.index(ctx, t.ID, t.UpdatedAt, life)
}

// index records the thread's last update for listing. The index is kept
// apart from the thread's keys (another Cluster slot), so it is updated
// after the write; a thread missing from it is only missing from listings.
func (s *Store) index(ctx context.Context, id string, updated time.Time, life int64) error {
	return unavailable(indexScript.Run(ctx, s.rdb, []string{s.indexKey()}, score(updated), id, life).Err())
}

// indexScript adds a thread to the index and extends the index's TTL, never
// shortening it: the index must outlive its longest-lived thread.
var indexScript = redis.NewScript(`
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`)

func (s *Store) Create(ctx context.Context, t *memory.Thread) error { return s.put(ctx, t, false) }

func (s *Store) Get(ctx context.Context, id string, now time.Time) (*memory.Thread, error) {
	pipe := s.rdb.Pipeline()
	h := pipe.HGetAll(ctx, s.metaKey(id))
	turns := pipe.LRange(ctx, s.turnsKey(id), 0, -1)
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable(err)
	}
	return s.decode(id, h.Val(), turns.Val(), now)
}

// decode rebuilds a thread; an absent or expired one is not found.
func (s *Store) decode(id string, h map[string]string, rawTurns []string, now time.Time) (*memory.Thread, error) {
	if len(h) == 0 {
		return nil, memory.ErrNotFound
	}
	expires, _ := strconv.ParseInt(h["expires_ms"], 10, 64)
	if expires <= now.UnixMilli() {
		return nil, memory.ErrNotFound
	}
	var m meta
	if err := json.Unmarshal([]byte(h["meta"]), &m); err != nil {
		return nil, fmt.Errorf("thread %s: decode: %w", id, err)
	}
	updated, _ := strconv.ParseInt(h["updated_ns"], 10, 64)
	t := &memory.Thread{ID: m.ID, ParentID: m.ParentID, ToolName: m.ToolName, ClientID: m.ClientID, CreatedAt: m.CreatedAt.UTC(),
		UpdatedAt: time.Unix(0, updated).UTC(), ExpiresAt: time.UnixMilli(expires).UTC(), InitialContext: m.InitialContext}
	for _, raw := range rawTurns {
		turn, err := decodeTurn(raw)
		if err != nil {
			return nil, fmt.Errorf("thread %s: %w", id, err)
		}
		t.Turns = append(t.Turns, turn)
	}
	return t, nil
}

func (s *Store) Append(ctx context.Context, id, clientID string, turns []memory.Turn, maxTurns int, now, expiresAt time.Time) (int, error) {
	life := ttl(now, expiresAt)
	// Files are kept a quarter TTL past the thread, so the appends in that
	// window need not touch them again.
	keepUntil := expiresAt.Add(time.Duration(life) * time.Millisecond / 4)
	shas := fileSHAs(turns)
	args := []any{maxTurns, now.UnixMilli(), strconv.FormatInt(now.UnixNano(), 10), expiresAt.UnixMilli(), life, clientID,
		keepUntil.UnixMilli(), len(shas)}
	args = append(args, shas...)
	for _, turn := range turns {
		enc, err := s.encodeTurn(turn)
		if err != nil {
			return 0, err
		}
		args = append(args, enc)
	}
	res, err := appendScript.Run(ctx, s.rdb, s.threadKeys(id), args...).Slice()
	if err != nil {
		return 0, unavailable(err)
	}
	status, _ := res[0].(int64)
	count, _ := res[1].(int64)
	switch status {
	case -1:
		return 0, memory.ErrNotFound
	case -2:
		return int(count), memory.ErrTurnLimit
	}
	// The thread's files and the index live in other slots: extend and
	// update them in one round trip after the atomic append.
	pipe := s.rdb.Pipeline()
	keepLife := ttl(now, keepUntil)
	for _, sha := range res[2:] {
		blobScript.Eval(ctx, pipe, []string{s.blobKey(sha.(string))}, keepLife, keepUntil.UnixMilli(), "0", "", "")
	}
	indexScript.Eval(ctx, pipe, []string{s.indexKey()}, score(now), id, life)
	if _, err := pipe.Exec(ctx); err != nil {
		return int(count), unavailable(err)
	}
	return int(count), nil
}

// listBatch is how many index entries List reads at a time.
const listBatch = 100

func (s *Store) List(ctx context.Context, p memory.ListParams, now time.Time) ([]*memory.Thread, error) {
	maxScore := "+inf"
	if p.After != nil {
		maxScore = strconv.FormatFloat(score(p.After.UpdatedAt), 'f', 0, 64)
	}
	var out []*memory.Thread
	for offset := int64(0); len(out) < p.Limit; offset += listBatch {
		entries, err := s.rdb.ZRevRangeByScoreWithScores(ctx, s.indexKey(), &redis.ZRangeBy{Max: maxScore, Min: "-inf", Offset: offset, Count: listBatch}).Result()
		if err != nil {
			return nil, unavailable(err)
		}
		for _, e := range entries {
			id := e.Member.(string)
			if p.After != nil && e.Score == score(p.After.UpdatedAt) && id >= p.After.ID {
				continue
			}
			t, err := s.Get(ctx, id, now)
			if errors.Is(err, memory.ErrNotFound) {
				s.rdb.ZRem(ctx, s.indexKey(), id) // expired or deleted: tidy the index
				continue
			}
			if err != nil {
				return nil, err
			}
			if t.ClientID == p.ClientID && (p.ToolName == "" || t.ToolName == p.ToolName) {
				out = append(out, t)
				if len(out) == p.Limit {
					break
				}
			}
		}
		if len(entries) < listBatch {
			break
		}
	}
	return out, nil
}

func (s *Store) Delete(ctx context.Context, id string) error {
	n, err := s.rdb.Del(ctx, s.threadKeys(id)...).Result()
	if err != nil {
		return unavailable(err)
	}
	s.rdb.ZRem(ctx, s.indexKey(), id)
	if n == 0 {
		return memory.ErrNotFound
	}
	return nil
}

// Import checks every thread before it writes any, so a clash stores
// nothing. Each thread is written atomically; a Redis failure part way
// leaves the threads written so far, which an import with replace redoes.
func (s *Store) Import(ctx context.Context, threads []*memory.Thread, replace bool) error {
	for _, t := range threads {
		owner, err := s.rdb.HGet(ctx, s.metaKey(t.ID), "client").Result()
		switch {
		case errors.Is(err, redis.Nil):
			continue
		case err != nil:
			return unavailable(err)
		case owner != t.ClientID:
			return fmt.Errorf("%w: %s", memory.ErrOwned, t.ID)
		case !replace:
			return fmt.Errorf("%w: %s", memory.ErrExists, t.ID)
		}
	}
	for _, t := range threads {
		if err := s.put(ctx, t, replace); err != nil {
			return err
		}
	}
	return nil
}

// blobScript stores a blob (ARGV[3] = '1') or only extends a stored one
// (ARGV[3] = '0'); an expiry only ever moves later.
var blobScript = redis.NewScript(`
local exp = redis.call('HGET', KEYS[1], 'expires_ms')
if not exp then
  if ARGV[3] == '0' then return 0 end
  redis.call('HSET', KEYS[1], 'content', ARGV[4], 'tokens', ARGV[5], 'expires_ms', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
if tonumber(exp) < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], 'expires_ms', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
end
return 0
`)

func (s *Store) SaveBlobs(ctx context.Context, blobs []memory.Blob, now, expiresAt time.Time) error {
	if len(blobs) == 0 {
		return nil
	}
	life, exp := ttl(now, expiresAt), expiresAt.UnixMilli()
	pipe := s.rdb.Pipeline()
	for _, b := range blobs {
		content, err := s.pack([]byte(b.Content))
		if err != nil {
			return err
		}
		counts, err := json.Marshal(b.Tokens)
		if err != nil {
			return fmt.Errorf("encode token counts: %w", err)
		}
		blobScript.Eval(ctx, pipe, []string{s.blobKey(b.SHA256)}, life, exp, "1", content, string(counts))
	}
	_, err := pipe.Exec(ctx)
	return unavailable(err)
}

func (s *Store) GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	out := map[string]memory.Blob{}
	if len(shas) == 0 {
		return out, nil
	}
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(shas))
	for i, sha := range shas {
		cmds[i] = pipe.HMGet(ctx, s.blobKey(sha), "content", "tokens", "expires_ms")
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return nil, unavailable(err)
	}
	for i, cmd := range cmds {
		v := cmd.Val()
		content, ok1 := v[0].(string)
		counts, _ := v[1].(string)
		expStr, ok3 := v[2].(string)
		exp, _ := strconv.ParseInt(expStr, 10, 64)
		if !ok1 || !ok3 || exp <= now.UnixMilli() {
			continue
		}
		raw, err := unpack([]byte(content))
		if err != nil {
			return nil, fmt.Errorf("blob %s: %w", shas[i], err)
		}
		b := memory.Blob{SHA256: shas[i], Content: string(raw)}
		if err := json.Unmarshal([]byte(counts), &b.Tokens); err != nil {
			return nil, fmt.Errorf("blob %s: decode token counts: %w", shas[i], err)
		}
		out[shas[i]] = b
	}
	return out, nil
}

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) error { return unavailable(s.rdb.Ping(ctx).Err()) }

func (s *Store) Close() error { return s.rdb.Close() }

var gzipMagic = []byte{0x1f, 0x8b}

func (s *Store) encodeTurn(t memory.Turn) (string, error) {
	raw, err := json.Marshal(t)
	if err != nil {
		return "", fmt.Errorf("encode turn: %w", err)
	}
	return s.pack(raw)
}

// pack gzips data when compression is on and data is large enough to gain.
func (s *Store) pack(data []byte) (string, error) {
	if !s.compress || len(data) < compressAbove {
		return string(data), nil
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		return "", fmt.Errorf("compress: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("compress: %w", err)
	}
	return buf.String(), nil
}

// unpack reads data written with or without compression, so the setting
// can change without losing threads. JSON never starts with gzip's magic.
func unpack(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, gzipMagic) {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("decompress: %w", err)
	}
	return io.ReadAll(zr)
}

func decodeTurn(raw string) (memory.Turn, error) {
	data, err := unpack([]byte(raw))
	if err != nil {
		return memory.Turn{}, fmt.Errorf("turn: %w", err)
	}
	var t memory.Turn
	if err := json.Unmarshal(data, &t); err != nil {
		return memory.Turn{}, fmt.Errorf("decode turn: %w", err)
	}
	return t, nil
}
