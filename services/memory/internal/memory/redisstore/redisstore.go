// Package redisstore keeps threads in Redis, for clusters of zen replicas.
//
// Key layout (prefix defaults to "zen:"; braces are a Cluster hash tag, so
// the keys that share one live in one slot and a script can touch them all):
//
//	zen:{<thread id>}:meta       hash: meta (JSON of the thread without
//	                             turns), rev (the meta's; none before it was
//	                             kept), client, updated_ns, expires_ms,
//	                             files_ms, weight (memory.MaxThreadWeight;
//	                             none before weights were kept)
//	zen:{<thread id>}:turns      list: one JSON turn per element, gzip'd
//	                             when compression is on and it is large
//	zen:{<thread id>}:files      set: sha256 of every file the turns use
//	zen:{<thread id>}:exchanges  set: the exchange ids appended, so a
//	                             retried append is stored once
//	zen:client:{<hash>}:updated  sorted set: one client's thread ids by
//	                             last update (microseconds), for listing
//	zen:client:{<hash>}:expires  sorted set: the same ids by expiry (ms),
//	                             to sweep expired ones out of both
//	zen:blob:<sha256>            hash: content (gzip'd like turns), tokens
//	                             (JSON), expires_ms, bytes (the content's
//	                             length; none before it was kept)
//	zen:marker                   a random value that tells a Redis that
//	                             lost its data (see durability.go)
//	zen:lost                     when that last happened (ms)
//
// <hash> is a digest of the client identity. Every key but the marker has
// a TTL: a thread's keys expire with it, a client's index with its newest
// thread, and the record of a loss after a conversation's lifetime. Create
// and append are Lua scripts, so concurrent writers never lose a turn and
// a rejected append changes nothing.
package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// Store is a memory.Store in Redis.
type Store struct {
	rdb      redis.UniversalClient
	prefix   string
	compress bool
	// oneServer is a client of one server (or one Sentinel master), whose
	// write scripts may reach a thread's client index too: one round trip
	// a write. Cluster spreads them over slots.
	oneServer bool

	// What Check and the data-loss watch learnt; see durability.go.
	mu         sync.Mutex
	marker     string // the marker value this store last saw
	lossWindow time.Duration
	onLoss     func(at time.Time)
	lostAt     time.Time // the last loss noticed or read

	cache  *memory.TurnCache
	tails  *tailDigests // of the cache's last turns (tails.go)
	metas  *metaCache
	health *Health // the last check's result

	logger *slog.Logger // what fails no call: upkeep after a write that was stored
}

var _ memory.Store = (*Store)(nil)

// New wraps a client. prefix namespaces every key ("zen:" when empty).
func New(rdb redis.UniversalClient, prefix string, compress bool) *Store {
	if prefix == "" {
		prefix = "zen:"
	}
	_, oneServer := rdb.(*redis.Client)
	return &Store{rdb: rdb, prefix: prefix, compress: compress, oneServer: oneServer, lossWindow: defaultLossWindow,
		cache: memory.NewTurnCache(memory.DefaultTurnCacheBytes), tails: newTailDigests(),
		metas:  newMetaCache(memory.DefaultHeadBytes),
		logger: slog.New(slog.DiscardHandler)}
}

// LogTo sets where the store logs the failures it fails no call for: the
// upkeep after a write that was stored, which the next write redoes. Call
// it before the store is used.
func (s *Store) LogTo(logger *slog.Logger) { s.logger = logger }

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

func (s *Store) exchangesKey(id string) string {
	return s.prefix + "{" + id + "}:exchanges"
}

func (s *Store) threadKeys(id string) []string {
	return []string{s.metaKey(id), s.turnsKey(id), s.filesKey(id), s.exchangesKey(id)}
}

// keys are what a write script of the client's thread is given: the
// thread's keys, and its client's index when the script may update it.
func (s *Store) keys(id, client string) []string {
	if !s.oneServer {
		return s.threadKeys(id)
	}
	return append(s.threadKeys(id), s.clientKeys(client)...)
}
func (s *Store) blobKey(sha string) string { return s.prefix + "blob:" + sha }

// failure is a Redis failure as memory tells it: a Redis full under
// noeviction has no room (ErrFull); any other failure is retryable
// (ErrUnavailable).
func failure(err error) error {
	switch {
	case err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return err
	case redis.IsOOMError(err):
		return fmt.Errorf("%w: redis reached its maxmemory: %v", memory.ErrFull, err)
	}
	return fmt.Errorf("%w: redis: %v", memory.ErrUnavailable, err)
}

// ttl is how long keys live: until expiresAt as seen from now, at least
// one millisecond (a zero or negative TTL would delete at once).
func ttl(now, expiresAt time.Time) int64 {
	return max(1, expiresAt.Sub(now).Milliseconds())
}

// meta is what the hash keeps besides the turns.
type meta struct {
	ID             string         `json:"thread_id"`
	ParentID       string         `json:"parent_thread_id,omitempty"`
	ToolName       string         `json:"tool_name"`
	ClientID       string         `json:"client_id,omitempty"`
	CreatedAt      time.Time      `json:"created_at"`
	InitialContext map[string]any `json:"initial_context,omitempty"`
	// Rev names this write of the whole thread (see memory.TurnCache).
	Rev string `json:"rev,omitempty"`
}

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
	rev, seen := s.cache.Peek(id)
	want, known := s.tails.get(id, rev, seen)
	if seen > 0 && !known {
		s.cache.Forget(id) // its turns cannot be checked against Redis's
		seen = 0
	}
	t, m, stored, raw, last, err := s.readFrom(ctx, id, seen, now, max)
	if err != nil || t.Weight > max {
		return t, err
	}
	if seen > 0 && (m.Rev != rev || stored < seen || last != want) {
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
	t.Turns, err = s.cache.Read(id, m.Rev, count, func(from int) ([]memory.Turn, error) {
		if from >= seen {
			return decodeTurns(ctx, id, raw[from-seen:])
		}
		// Another read cached fewer turns meanwhile: read them again, at
		// the revision of the rest.
		_, again, _, more, _, err := s.readFrom(ctx, id, from, now, max)
		if err != nil {
			return nil, err
		}
		if again.Rev != m.Rev || len(more) < count-from {
			return nil, fmt.Errorf("thread %s: %w", id, memory.ErrWrittenAnew)
		}
		return decodeTurns(ctx, id, more[:count-from])
	})
	if err != nil {
		return nil, err
	}
	if len(raw) > 0 {
		s.tails.put(id, m.Rev, count, raw[len(raw)-1])
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
	if len(h) == 0 {
		return nil, m, memory.ErrNotFound
	}
	expires, _ := strconv.ParseInt(h["expires_ms"], 10, 64)
	if expires <= now.UnixMilli() {
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
	updated, _ := strconv.ParseInt(h["updated_ns"], 10, 64)
	t := m.thread()
	t.Weight, _ = strconv.ParseInt(h["weight"], 10, 64) // none before weights were kept
	t.CreatedAt = m.CreatedAt.UTC()
	t.UpdatedAt, t.ExpiresAt = time.Unix(0, updated).UTC(), time.UnixMilli(expires).UTC()
	return &t, m, nil
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

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) error { return failure(s.rdb.Ping(ctx).Err()) }

func (s *Store) Close() error { return s.rdb.Close() }
