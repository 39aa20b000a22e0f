package redisstore

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/storetest"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// tripCounter counts round trips to Redis: a command, or a pipeline.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmd)
	}
}

func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		c.n.Add(1)
		return next(ctx, cmds)
	}
}

// Each operation on a thread is one round trip to a single Redis: a script
// or a pipeline. Delete is two (its client's index is named by what it
// deletes), and in Cluster a write updates the index in a second.
func TestOneRoundTripPerOperation(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	file := memory.Blob{SHA256: "f1", Content: "package f\n"}
	answer := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}}
	for _, cluster := range []bool{false, true} {
		_, s := miniStore(t)
		s.oneServer = !cluster
		var trips tripCounter
		s.rdb.(*redis.Client).AddHook(&trips)
		write := 1
		if cluster {
			write = 2
		}
		appendX := func(th *memory.Thread, exchange string) error {
			_, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: exchange}, answer, 10, now, now.Add(time.Hour))
			return err
		}
		for _, op := range []struct {
			name     string
			trips    int
			fresh    bool     // the thread is not created beforehand
			appended []string // the exchanges appended beforehand
			run      func(th *memory.Thread) error
		}{
			{"save files", 1, false, nil, func(*memory.Thread) error {
				return s.SaveBlobs(ctx, []memory.Blob{file}, now, now.Add(time.Hour))
			}},
			{"create", write, true, nil, func(th *memory.Thread) error { return s.Create(ctx, th) }},
			{"first append, which keeps the files", 2, false, nil, func(th *memory.Thread) error {
				return appendX(th, "x1")
			}},
			{"append", write, false, []string{"x1"}, func(th *memory.Thread) error { return appendX(th, "x2") }},
			{"retried append", write, false, []string{"x1", "x2"}, func(th *memory.Thread) error {
				return appendX(th, "x2")
			}},
			{"get", 1, false, nil, func(th *memory.Thread) error { _, err := s.Get(ctx, th.ID, now); return err }},
			{"get files", 1, false, nil, func(*memory.Thread) error {
				_, err := s.GetBlobs(ctx, []string{"f1"}, now)
				return err
			}},
			{"get file heads", 1, false, nil, func(*memory.Thread) error {
				_, err := s.BlobHeads(ctx, []string{"f1"}, now)
				return err
			}},
			{"delete", 2, false, nil, func(th *memory.Thread) error { return s.Delete(ctx, th.ID) }},
		} {
			// The first run loads the scripts and dials the connections.
			for run := range 2 {
				th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: "me", CreatedAt: now,
					UpdatedAt: now, ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{
						{Role: memory.RoleUser, Content: "q", Files: []memory.FileRef{{Path: "/f", SHA256: "f1"}}},
					}}
				if !op.fresh {
					if err := s.Create(ctx, th); err != nil {
						t.Fatal(err)
					}
				}
				for _, x := range op.appended {
					if err := appendX(th, x); err != nil {
						t.Fatal(err)
					}
				}
				before := trips.n.Load()
				if err := op.run(th); err != nil {
					t.Fatalf("%s: %v", op.name, err)
				}
				if n := trips.n.Load() - before; run == 1 && n != int64(op.trips) {
					t.Errorf("cluster %v: %s took %d round trips, want %d", cluster, op.name, n, op.trips)
				}
			}
		}
	}
}

// turnsRead counts the turns Redis returns to reads of thread turn lists
// (n): LRANGE's, and the scripts' that answer a thread's hash, count and
// turns; and the bytes of the metas those scripts answer (metaBytes).
type turnsRead struct{ n, metaBytes atomic.Int64 }

func (c *turnsRead) DialHook(next redis.DialHook) redis.DialHook { return next }

func (c *turnsRead) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		c.count(cmd)
		return err
	}
}

func (c *turnsRead) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return err
	}
}

func (c *turnsRead) count(cmd redis.Cmder) {
	switch reply := cmd.(type) {
	case *redis.StringSliceCmd:
		if cmd.Name() == "lrange" {
			c.n.Add(int64(len(reply.Val())))
		}
	case *redis.MapStringStringCmd:
		c.metaBytes.Add(int64(len(reply.Val()["meta"])))
	case *redis.Cmd:
		if parts, ok := reply.Val().([]any); ok && len(parts) >= 3 && (cmd.Name() == "evalsha" || cmd.Name() == "eval") {
			if turns, ok := parts[2].([]any); ok {
				c.n.Add(int64(len(turns)))
			}
			if fields, ok := parts[0].([]any); ok {
				for i := 0; i+1 < len(fields); i += 2 {
					if name, _ := fields[i].(string); name == "meta" {
						value, _ := fields[i+1].(string)
						c.metaBytes.Add(int64(len(value)))
					}
				}
			}
		}
	}
}

// A continued call reads the thread its previous call appended to: the
// append leaves its turns with the ones this process keeps, so that read
// fetches and decodes no turn.
func TestAReadAfterAnAppendReadsNoTurns(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s, th, read := readThenAppended(t, now, nil)
	before := read.n.Load()
	got, err := s.Get(ctx, th.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	if n := read.n.Load() - before; n != 0 {
		t.Errorf("the read after the append fetched %d turns, want none", n)
	}
	if len(got.Turns) != 3 || got.Turns[2].Content != "q2" {
		t.Errorf("turns: %+v, want q1, a1, q2", got.Turns)
	}
}

// readThenAppended is a thread of one turn, with initial context, read
// once, then appended two turns to, as a continued call finds it; and
// what Redis has returned to the store's reads since it was created.
func readThenAppended(t *testing.T, now time.Time, initial map[string]any) (*Store, *memory.Thread, *turnsRead) {
	t.Helper()
	ctx := context.Background()
	_, s := miniStore(t)
	read := &turnsRead{}
	s.rdb.(*redis.Client).AddHook(read)
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q1"}},
		InitialContext: initial}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, th.ID, now); err != nil {
		t.Fatal(err)
	}
	turns := []memory.Turn{{Role: memory.RoleAssistant, Content: "a1"}, {Role: memory.RoleUser, Content: "q2"}}
	if _, err := s.Append(ctx, th.ID, "", memory.Exchange{ID: "x-1"}, turns, 10, now, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	return s, th, read
}

// A continued call's read fetches the thread's meta only when it was
// written anew since this process decoded it: the meta holds the first
// call's arguments (the initial context), and a read after an append took
// 0.84 ms with one of 400 KB against 0.12 with a prompt of 100 bytes.
func TestAReadAfterAnAppendFetchesNoInitialContext(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	s, th, read := readThenAppended(t, now, map[string]any{"prompt": strings.Repeat("x", 64<<10)})
	before := read.metaBytes.Load()
	got, _, err := s.GetWithin(ctx, th.ID, now, 1<<20) // as a continued call's prepare reads it
	if err != nil {
		t.Fatal(err)
	}
	if n := read.metaBytes.Load() - before; n != 0 {
		t.Errorf("the read after the append fetched %d bytes of the thread's meta, want none", n)
	}
	if diff := cmp.Diff(th.InitialContext, got.InitialContext); diff != "" || len(got.Turns) != 3 {
		t.Errorf("%d turns, want 3; initial context (-want +got):\n%s", len(got.Turns), diff)
	}
	// Written anew (imported over), the meta is fetched again.
	again := *th
	again.InitialContext = map[string]any{"prompt": "replaced"}
	if err := s.Import(ctx, []*memory.Thread{&again}, true, now); err != nil {
		t.Fatal(err)
	}
	got, _, err = s.GetWithin(ctx, th.ID, now, 1<<20)
	if err != nil || got.InitialContext["prompt"] != "replaced" {
		t.Fatalf("the read after an import over it: %+v, %v; want the new initial context", got, err)
	}
}

// TestConformanceAsInCluster runs the suite with the index updated after
// each write, as in Cluster, where no script may reach it.
func TestConformanceAsInCluster(t *testing.T) {
	srv := redistest.Start(t)
	storetest.Run(t, func(t *testing.T) memory.Store {
		s, err := Open(srv.URL(), "test:"+uuid.NewString()+":", false)
		if err != nil {
			t.Fatal(err)
		}
		s.oneServer = false
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// A thread read within a weight it weighs more than sends none of its
// turns from Redis: GetWithin's point is that a reader makes room before
// a thread's turns reach it.
func TestAHeavierThreadsTurnsStayInRedis(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	_, s := miniStore(t)
	var sent turnsRead
	s.rdb.(*redis.Client).AddHook(&sent)
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Weight: 500,
		Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q1"}, {Role: memory.RoleAssistant, Content: "a1"}}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, heavier, err := s.GetWithin(ctx, th.ID, now, 499); err != nil || !heavier {
		t.Fatalf("within 499: heavier %v, %v; want heavier", heavier, err)
	}
	if n := sent.n.Load(); n != 0 {
		t.Errorf("a read within less than the thread weighs was sent %d turns, want none", n)
	}
	if got, heavier, err := s.GetWithin(ctx, th.ID, now, 500); err != nil || heavier || len(got.Turns) != 2 {
		t.Fatalf("within 500: %+v, heavier %v, %v; want the thread", got, heavier, err)
	}
	if n := sent.n.Load(); n != 2 {
		t.Errorf("a read within what the thread weighs was sent %d turns, want 2", n)
	}
}

// forgetsMetas lets the store's decoded metas go after each script's
// answer, as a cache full of other threads would, and counts the scripts.
type forgetsMetas struct {
	s       *Store
	scripts *atomic.Int64
}

func (f forgetsMetas) DialHook(next redis.DialHook) redis.DialHook { return next }

func (f forgetsMetas) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if cmd.Name() == "evalsha" || cmd.Name() == "eval" {
			f.scripts.Add(1)
			f.s.metas.mu.Lock()
			f.s.metas.heads.Clear()
			f.s.metas.mu.Unlock()
		}
		return err
	}
}

func (f forgetsMetas) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// A read answered without the meta takes the meta it held when it asked,
// even when the store's cache has let it go since: looked up again, one
// let go cost a read of the whole hash more.
func TestAReadTakesTheMetaItHeldWhenItAsked(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	_, s := miniStore(t)
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q1"}},
		InitialContext: map[string]any{"prompt": "review the parser"}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.GetWithin(ctx, th.ID, now, 1<<20); err != nil {
		t.Fatal(err)
	}
	var scripts atomic.Int64
	s.rdb.(*redis.Client).AddHook(forgetsMetas{s, &scripts})
	got, _, err := s.GetWithin(ctx, th.ID, now, 1<<20)
	if err != nil {
		t.Fatal(err)
	}
	if got.InitialContext["prompt"] != "review the parser" || len(got.Turns) != 1 || scripts.Load() != 1 {
		t.Errorf("the read: %+v in %d scripts; want the thread with its initial context, in one", got,
			scripts.Load())
	}
}
