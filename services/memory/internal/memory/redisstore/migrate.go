package redisstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Releases before the per-client index kept one index of every client's
// threads ("zen:index"). Rather than read it as a fallback, which is the
// slow listing the per-client index replaces, Check moves its entries
// into their clients' indexes and deletes it. Check runs at start and
// every few seconds after, so entries that replicas of an older release
// still add during a rolling upgrade move too, soon after.

// oldIndexKey is the one index of older releases.
func (s *Store) oldIndexKey() string { return s.prefix + "index" }

// migrateBatch is how many old entries one round moves.
const migrateBatch = 500

// migrate moves the old index's live threads into their clients' indexes,
// scored by the update time each thread records, and returns how many.
func (s *Store) migrate(ctx context.Context, now time.Time) (int, error) {
	moved := 0
	for {
		ids, err := s.rdb.ZRange(ctx, s.oldIndexKey(), 0, migrateBatch-1).Result()
		if err != nil || len(ids) == 0 {
			return moved, failure(err)
		}
		read := s.rdb.Pipeline()
		metas := make([]*redis.SliceCmd, len(ids))
		for i, id := range ids {
			metas[i] = read.HMGet(ctx, s.metaKey(id), "client", "updated_ns", "expires_ms")
		}
		if _, err := read.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return moved, failure(err)
		}
		write := s.rdb.Pipeline()
		gone := make([]any, len(ids))
		indexed := 0
		for i, id := range ids {
			gone[i] = id
			v := metas[i].Val()
			client, ok := v[0].(string)
			updated, _ := strconv.ParseInt(str(v[1]), 10, 64)
			expires, _ := strconv.ParseInt(str(v[2]), 10, 64)
			if !ok || expires <= now.UnixMilli() {
				continue // expired: nothing to list
			}
			s.index(ctx, write, client, id, time.Unix(0, updated), time.UnixMilli(expires), now)
			indexed++
		}
		// The old entries go once the new ones are written, not in the same
		// pipeline: a full Redis refuses the new ones and lets the removal
		// through, which would drop the threads from every listing.
		if indexed > 0 {
			if _, err := write.Exec(ctx); err != nil {
				return moved, failure(err)
			}
		}
		moved += indexed
		// Entries an old replica re-scored meanwhile go too: their
		// threads are indexed by the update time just read, a moment old.
		if err := s.rdb.ZRem(ctx, s.oldIndexKey(), gone...).Err(); err != nil {
			return moved, failure(err)
		}
	}
}
