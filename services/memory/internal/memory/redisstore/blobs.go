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
	return failure(err)
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
		return nil, failure(err)
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
