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

// blobScript stores a blob (ARGV[3] = '1') or only extends a stored one
// (ARGV[3] = '0'); an expiry only ever moves later. ARGV[6] is the
// content's length before packing, which a blob stored before it was kept
// (or whose length is not one) gains when it is stored again.
var blobScript = redis.NewScript(`
local exp = redis.call('HGET', KEYS[1], 'expires_ms')
if not exp then
  if ARGV[3] == '0' then return 0 end
  redis.call('HSET', KEYS[1], 'content', ARGV[4], 'tokens', ARGV[5], 'expires_ms', ARGV[2], 'bytes', ARGV[6])
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  return 1
end
if ARGV[3] == '1' then redis.call('HSET', KEYS[1], 'bytes', ARGV[6]) end
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
		blobScript.Eval(ctx, pipe, []string{s.blobKey(b.SHA256)}, life, exp, "1", content, string(counts),
			len(b.Content))
	}
	_, err := pipe.Exec(ctx)
	return failure(err)
}

func (s *Store) GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	out := map[string]memory.Blob{}
	err := s.liveBlobs(ctx, shas, now, []string{"content", "tokens"}, func(sha string, v []any) error {
		content, ok := v[0].(string)
		if !ok {
			return nil // a hash without content holds no file
		}
		raw, err := unpack([]byte(content))
		if err != nil {
			return fmt.Errorf("blob %s: %w", sha, err)
		}
		b := memory.Blob{SHA256: sha, Content: string(raw)}
		if b.Tokens, err = tokenCounts(sha, v[1]); err != nil {
			return err
		}
		out[sha] = b
		return nil
	})
	return out, err
}

// BlobHeads reads each blob's recorded length, not its content: a blob
// stored before lengths were recorded has none (-1).
func (s *Store) BlobHeads(ctx context.Context, shas []string, now time.Time) (map[string]memory.BlobHead, error) {
	out := map[string]memory.BlobHead{}
	err := s.liveBlobs(ctx, shas, now, []string{"bytes", "tokens"}, func(sha string, v []any) error {
		h := memory.BlobHead{Bytes: -1} // unknown: the content tells
		if size, ok := v[0].(string); ok {
			if n, err := strconv.ParseInt(size, 10, 64); err == nil && n >= 0 {
				h.Bytes = n
			}
		}
		var err error
		if h.Tokens, err = tokenCounts(sha, v[1]); err != nil {
			return err
		}
		out[sha] = h
		return nil
	})
	return out, err
}

// liveBlobs reads fields of each of shas' blobs in one round trip and
// hands those of the live ones (expiring after now) to each, in the order
// asked.
func (s *Store) liveBlobs(ctx context.Context, shas []string, now time.Time, fields []string,
	each func(sha string, values []any) error) error {
	if len(shas) == 0 {
		return nil
	}
	asked := append([]string{"expires_ms"}, fields...)
	pipe := s.rdb.Pipeline()
	cmds := make([]*redis.SliceCmd, len(shas))
	for i, sha := range shas {
		cmds[i] = pipe.HMGet(ctx, s.blobKey(sha), asked...)
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return failure(err)
	}
	for i, cmd := range cmds {
		v := cmd.Val()
		expStr, ok := v[0].(string)
		exp, _ := strconv.ParseInt(expStr, 10, 64)
		if !ok || exp <= now.UnixMilli() {
			continue
		}
		if err := each(shas[i], v[1:]); err != nil {
			return err
		}
	}
	return nil
}

// tokenCounts decodes a blob's token counts, as a hash field's value.
func tokenCounts(sha string, field any) (map[string]int64, error) {
	counts, _ := field.(string)
	var m map[string]int64
	if err := json.Unmarshal([]byte(counts), &m); err != nil {
		return nil, fmt.Errorf("blob %s: decode token counts: %w", sha, err)
	}
	return m, nil
}
