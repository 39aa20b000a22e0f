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
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/secrets"
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

	cache  *memory.TurnCache // with the digest of each thread's last turn (tails.go)
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
		cache: memory.NewTurnCache(memory.DefaultTurnCacheBytes), metas: newMetaCache(memory.DefaultHeadBytes),
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
			return nil, urlError(rawURL, err)
		}
		return redis.NewClusterClient(opts), nil
	case sentinel:
		opts, err := redis.ParseFailoverURL(u)
		if err != nil {
			return nil, urlError(rawURL, err)
		}
		return redis.NewFailoverClient(opts), nil
	}
	opts, err := redis.ParseURL(u)
	if err != nil {
		return nil, urlError(rawURL, err)
	}
	return redis.NewClient(opts), nil
}

// urlError says why rawURL could not be read without quoting its
// passwords: net/url's errors quote the URL whole, and this one reaches
// stderr and the logs. A URL with credentials gets no detail at all: one
// whose password holds "?", "#" or "/" is split there, and the error quotes
// the password's start, which no scrubber knows.
func urlError(rawURL string, err error) error {
	const form = "the form is redis://[user:password@]host:port/db"
	if scheme, rest, ok := strings.Cut(rawURL, "://"); ok && strings.Contains(rest, "@") {
		return fmt.Errorf("REDIS_URL (a %s URL with credentials) does not parse; %s, with any of ? # / %% @ in "+
			"the password percent-encoded", scheme, form)
	}
	if ue, ok := errors.AsType[*url.Error](err); ok {
		err = ue.Err
	}
	msg := secrets.New(secrets.RedisPasswords(rawURL)...).String(err.Error())
	return fmt.Errorf("REDIS_URL: %s; %s", msg, form)
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

// Ping reports whether Redis answers.
func (s *Store) Ping(ctx context.Context) error { return failure(s.rdb.Ping(ctx).Err()) }

func (s *Store) Close() error { return s.rdb.Close() }
