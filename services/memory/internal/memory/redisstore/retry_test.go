package redisstore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// twice sends every script a second time once it has run, as go-redis
// does when a reply is later than its read timeout: the script ran, and
// runs again.
type twice struct{}

func (twice) DialHook(next redis.DialHook) redis.DialHook { return next }

func (twice) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (twice) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if err := next(ctx, cmd); err != nil || !strings.HasPrefix(strings.ToLower(cmd.Name()), "eval") {
			return err
		}
		return next(ctx, cmd)
	}
}

// A create whose script runs twice (its reply late, go-redis sends it
// again) is stored once and reported stored: the second run found the
// thread and answered "exists", and the client was told its answer could
// not be saved, though the thread was there.
func TestACreateRunTwiceIsStored(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	rdb.AddHook(twice{})
	s := New(rdb, "", false)
	now := time.Now()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: "alice", CreatedAt: now,
		UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q"}}}
	if err := s.Create(context.Background(), th); err != nil {
		t.Fatalf("a create run twice: %v, want it stored", err)
	}
	got, err := s.Get(context.Background(), th.ID, now)
	if err != nil || len(got.Turns) != 1 {
		t.Fatalf("the thread: %v turns, %v", got, err)
	}
	// Another create of the same id is still refused: only the same write
	// run again counts as stored.
	again := *th
	if err := New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), "", false).Create(context.Background(),
		&again); err == nil {
		t.Error("a second create of the same id went through")
	}
}

// leaves ends a context once a pipeline has been answered: the caller of
// a read leaves while its reply is on its way.
type leaves struct{ cancel func() }

func (leaves) DialHook(next redis.DialHook) redis.DialHook { return next }

func (leaves) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (l leaves) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		l.cancel()
		return err
	}
}

// A read whose caller has left by the time Redis answers decodes nothing:
// go-redis reads the reply to its end whatever the context says, and the
// decoding after it (a 60 MB thread's, a second's CPU and its size again
// in memory) went on for nobody.
func TestAReadWhoseCallerLeftDecodesNothing(t *testing.T) {
	t.Parallel()
	mr := miniredis.RunT(t)
	now := time.Now()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q"}}}
	if err := New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), "", false).Create(t.Context(), th); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	rdb.AddHook(leaves{cancel})
	got, err := New(rdb, "", false).Get(ctx, th.ID, now)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a read whose caller left: %v, %v; want context.Canceled", got, err)
	}
}
