package redisstore

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync/atomic"
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
			s := openStore(t, srv, "lost:")
			th, read := threadOfOne(t, s, tc.readsWithin)
			read() // the cache holds exchange 1
			restore := snapshot(t, srv, s.threadKeys(th.ID))
			appendExchange(t, s, th.ID, "ex-2", numbered(2))
			read() // and exchange 2
			restore()
			if tc.readFirst {
				if got, want := read(), []string{"q1", "a1"}; !cmp.Equal(got, want) {
					t.Errorf("after Redis lost exchange 2, the store reads %v; Redis holds %v", got, want)
				}
			}
			appendExchange(t, s, th.ID, "ex-3", numbered(3))
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

// numbered is exchange n: question qn, answered an.
func numbered(n int) []memory.Turn {
	return []memory.Turn{{Role: memory.RoleUser, Content: fmt.Sprint("q", n)},
		{Role: memory.RoleAssistant, Content: fmt.Sprint("a", n)}}
}

// openStore is a store of srv's, prefixed, closed when the test ends.
func openStore(t *testing.T, srv *redistest.Server, prefix string) *Store {
	t.Helper()
	s, err := Open(srv.URL(), prefix, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// threadOfOne creates, through s, a thread of exchange 1, and returns it
// with a read of its turns' contents through s within a weight.
func threadOfOne(t *testing.T, s *Store, within int64) (*memory.Thread, func() []string) {
	t.Helper()
	now := time.Now()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: numbered(1)}
	if err := s.Create(t.Context(), th); err != nil {
		t.Fatal(err)
	}
	return th, func() []string {
		t.Helper()
		got, _, err := s.GetWithin(t.Context(), th.ID, time.Now(), within)
		if err != nil {
			t.Fatal(err)
		}
		return contents(got.Turns)
	}
}

// Another memory process may append where the lost turns were, before
// this one reads again: Redis then holds as many turns as this process's
// cache, or more, of the same revision, and the cache's last turn is not
// Redis's. What this process reads is still what Redis holds.
func TestTurnsRedisLostAreNotServedWhenAnotherProcessAppendedFirst(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	for _, tc := range []struct {
		name        string
		appended    []int // the exchanges the other process appends after the loss
		readsWithin int64
		want        []string
	}{
		{"as many turns, by script", []int{3}, 1 << 20, []string{"q1", "a1", "q3", "a3"}},
		{"as many turns, by transaction", []int{3}, math.MaxInt64, []string{"q1", "a1", "q3", "a3"}},
		{"more turns, by script", []int{3, 4}, 1 << 20, []string{"q1", "a1", "q3", "a3", "q4", "a4"}},
		{"more turns, by transaction", []int{3, 4}, math.MaxInt64, []string{"q1", "a1", "q3", "a3", "q4", "a4"}},
	} {
		// thisAppends: this process appends exchange 4 itself, onto what
		// it caches, before it reads.
		for _, thisAppends := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s, this process appending %v", tc.name, thisAppends), func(t *testing.T) {
				this, other := openStore(t, srv, "replicas:"), openStore(t, srv, "replicas:")
				th, read := threadOfOne(t, this, tc.readsWithin)
				read()
				restore := snapshot(t, srv, this.threadKeys(th.ID))
				appendExchange(t, this, th.ID, "ex-2", numbered(2))
				read() // this process caches exchange 2
				restore()
				for _, n := range tc.appended {
					appendExchange(t, other, th.ID, fmt.Sprint("ex-", n), numbered(n))
				}
				want := tc.want
				if thisAppends {
					appendExchange(t, this, th.ID, "ex-9", numbered(9))
					want = append(slices.Clone(want), "q9", "a9")
				}
				if got := read(); !cmp.Equal(got, want) {
					t.Errorf("this process reads %v; Redis holds %v", got, want)
				}
			})
		}
	}
}

// A read that began before Redis lost writes may put its turns in the
// cache after a later read checked others: what the cache then holds is
// checked at the next read as any other turns are, never taken on the
// word of a check made of other turns.
func TestTurnsCachedLateByAnEarlierReadAreCheckedToo(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	ctx := t.Context()
	s := openStore(t, srv, "late:")
	th, _ := threadOfOne(t, s, 0)
	for _, within := range []int64{1 << 20, math.MaxInt64} {
		if _, _, err := s.GetWithin(ctx, th.ID, time.Now(), within); err != nil { // checked, and cached
			t.Fatal(err)
		}
		rev, n, _ := s.cache.Last(th.ID)
		// The earlier read's turns, as Redis held them before it lost a
		// write, put after the check: as many, at the same revision.
		s.cache.Forget(th.ID)
		stale := []memory.Turn{{Role: memory.RoleUser, Content: "q1"}, {Role: memory.RoleAssistant, Content: "lost"}}
		if _, err := s.cache.Read(th.ID, rev, n, func(int) ([]memory.Turn, error) { return stale, nil }); err != nil {
			t.Fatal(err)
		}
		got, _, err := s.GetWithin(ctx, th.ID, time.Now(), within)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"q1", "a1"}; !cmp.Equal(contents(got.Turns), want) {
			t.Errorf("within %d: the store reads %v; Redis holds %v", within, contents(got.Turns), want)
		}
	}
}

// afterFirstCommand runs act once, after the first command or pipeline its
// client sends once armed: a process's Redis changing between a read's
// round trips.
type afterFirstCommand struct {
	armed atomic.Bool
	act   func()
}

func (h *afterFirstCommand) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *afterFirstCommand) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if h.armed.CompareAndSwap(true, false) {
			h.act()
		}
		return err
	}
}

func (h *afterFirstCommand) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		if h.armed.CompareAndSwap(true, false) {
			h.act()
		}
		return err
	}
}

// A read whose cached turns changed under it reads the thread again: what
// it then caches ends in the digest of its own last turn, though Redis lost
// the turn the first round trip read and another process appended where
// it was. Cached under the first round trip's digest, the turns passed a
// later check against a Redis that held the first turns again.
func TestAReadReadAgainCachesItsOwnTail(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer raw.Close()
	for _, within := range []int64{1 << 20, math.MaxInt64} {
		t.Run(fmt.Sprint(within), func(t *testing.T) {
			ctx := t.Context()
			this, other := openStore(t, srv, "reread:"), openStore(t, srv, "reread:")
			hook := &afterFirstCommand{}
			this.rdb.(*redis.Client).AddHook(hook)
			th, read := threadOfOne(t, this, within)
			read()
			beforeTwo := snapshot(t, srv, this.threadKeys(th.ID))
			appendExchange(t, other, th.ID, "ex-2", numbered(2))
			withTwo := snapshot(t, srv, this.threadKeys(th.ID))
			hook.act = func() {
				this.cache.Forget(th.ID) // another read's, meanwhile
				beforeTwo()
				appendExchange(t, other, th.ID, "ex-3", numbered(3))
			}
			hook.armed.Store(true)
			read()
			_, n, tail := this.cache.Last(th.ID)
			if n > 0 {
				last, _ := raw.LIndex(ctx, this.turnsKey(th.ID), int64(n-1)).Result()
				if tail != digest(last) {
					t.Errorf("the cache holds %d turns ending in %.8s; Redis's turn %d is %.8s", n, tail, n-1,
						digest(last))
				}
			}
			withTwo()
			if got, want := read(), []string{"q1", "a1", "q2", "a2"}; !cmp.Equal(got, want) {
				t.Errorf("the store reads %v; Redis holds %v", got, want)
			}
		})
	}
}
