package redisstore

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// A Redis that comes back without its last writes (killed under appendfsync
// everysec, or a failover to a replica that lagged) holds a thread at the
// revision the store cached, with fewer turns. What the store reads, and
// where it appends, is what Redis holds: the turns it cached past that are
// gone, whether a read or an append meets the loss first, through either
// way of reading (a script within a weight, a transaction past it).
func TestTurnsRedisLostAreNotServedFromTheCache(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	exchange := func(n int) []memory.Turn {
		return []memory.Turn{{Role: memory.RoleUser, Content: fmt.Sprint("q", n)},
			{Role: memory.RoleAssistant, Content: fmt.Sprint("a", n)}}
	}
	for _, tc := range []struct {
		name        string
		readFirst   bool  // a read meets the loss before the next append
		readsWithin int64 // the weight reads are made within
	}{
		{"a read first, by script", true, 1 << 20},
		{"a read first, by transaction", true, math.MaxInt64},
		{"an append first, by script", false, 1 << 20},
		{"an append first, by transaction", false, math.MaxInt64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s, err := Open(srv.URL(), "lost:", false)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			now := time.Now()
			th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
				ExpiresAt: now.Add(time.Hour), Turns: exchange(1)}
			if err := s.Create(ctx, th); err != nil {
				t.Fatal(err)
			}
			read := func() []string {
				t.Helper()
				got, _, err := s.GetWithin(ctx, th.ID, time.Now(), tc.readsWithin)
				if err != nil {
					t.Fatal(err)
				}
				return contents(got.Turns)
			}
			read() // the cache holds exchange 1
			restore := snapshot(t, srv, s.threadKeys(th.ID))
			appendExchange(t, s, th.ID, "ex-2", exchange(2))
			read() // and exchange 2
			restore()
			if tc.readFirst {
				if got, want := read(), []string{"q1", "a1"}; !cmp.Equal(got, want) {
					t.Errorf("after Redis lost exchange 2, the store reads %v; Redis holds %v", got, want)
				}
			}
			appendExchange(t, s, th.ID, "ex-3", exchange(3))
			if got, want := read(), []string{"q1", "a1", "q3", "a3"}; !cmp.Equal(got, want) {
				t.Errorf("after exchange 3 went where Redis had room, the store reads %v; Redis holds %v", got, want)
			}
		})
	}
}

// snapshot is what a lagging replica holds now of keys: restoring it puts
// them back as they are, with whatever was written after gone.
func snapshot(t *testing.T, srv *redistest.Server, keys []string) (restore func()) {
	t.Helper()
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = raw.Close() })
	ctx := context.Background()
	dumps := map[string]string{}
	for _, k := range keys {
		if d, err := raw.Dump(ctx, k).Result(); err == nil {
			dumps[k] = d
		}
	}
	return func() {
		for _, k := range keys {
			raw.Del(ctx, k)
			if d, ok := dumps[k]; ok {
				if err := raw.Restore(ctx, k, time.Hour, d).Err(); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
}

func appendExchange(t *testing.T, s *Store, id, exchangeID string, turns []memory.Turn) {
	t.Helper()
	now := time.Now()
	if _, err := s.Append(t.Context(), id, "", memory.Exchange{ID: exchangeID}, turns, 50, now,
		now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
}

func contents(turns []memory.Turn) []string {
	out := make([]string, len(turns))
	for i, t := range turns {
		out[i] = t.Content
	}
	return out
}
