package memory_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// redisBytes sums MEMORY USAGE over the keys under prefix.
func redisBytes(b *testing.B, url, prefix string) int64 {
	opts, err := redis.ParseURL(url)
	if err != nil {
		b.Fatal(err)
	}
	rdb := redis.NewClient(opts)
	defer rdb.Close()
	ctx := context.Background()
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, k := range keys {
		n, err := rdb.MemoryUsage(ctx, k).Result()
		if err != nil {
			b.Fatal(err)
		}
		total += n
	}
	return total
}
