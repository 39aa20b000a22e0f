package redisstore

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/logtest"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// A Redis with a maxmemory and the noeviction policy refuses, once full, a
// script at its first write that may take memory, but lets every write
// after one through (scripts.go); and it refuses every command of a
// transaction (MULTI), reads too. Memory's writes into a full Redis are
// refused whole, as ErrFull, leaving what they would replace as it was;
// its threads still read and list; and the same holds in a Cluster.
func TestAFullRedisRefusesWritesWholeAndStillReads(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) (string, []*redistest.Server)
	}{
		{"one server", func(t *testing.T) (string, []*redistest.Server) {
			srv := redistest.StartWith(t, redistest.NoPersistence...)
			return srv.URL(), []*redistest.Server{srv}
		}},
		{"cluster", func(t *testing.T) (string, []*redistest.Server) {
			return redistest.StartCluster(t, 3, redistest.NoPersistence...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			url, nodes := tc.start(t)
			refusedWholeAndRead(t, url, nodes)
		})
	}
}

func refusedWholeAndRead(t *testing.T, url string, nodes []*redistest.Server) {
	s := openURL(t, url)
	ctx := context.Background()
	now := time.Now()
	kept := fileThread(uuid.NewString(), "kept", "kept.go", now)
	if err := s.Create(ctx, kept); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(ctx, kept.ID, now); err != nil { // the store now keeps its turns: it reads on from them
		t.Fatal(err)
	}
	setMaxmemory(t, nodes, "1")
	if _, err := s.Check(ctx, now); err != nil {
		t.Fatalf("check a full Redis: %v", err)
	}

	fresh := fileThread(uuid.NewString(), "fresh", "fresh.go", now)
	if err := s.Create(ctx, fresh); !errors.Is(err, memory.ErrFull) {
		t.Errorf("create in a full Redis: %v, want ErrFull", err)
	}
	if _, err := s.Get(ctx, fresh.ID, now); !errors.Is(err, memory.ErrNotFound) {
		t.Errorf("the thread a full Redis refused reads as %v, want ErrNotFound", err)
	}
	if err := s.Import(ctx, []*memory.Thread{fileThread(kept.ID, "replaced", "replaced.go", now)},
		true, now); !errors.Is(err, memory.ErrFull) {
		t.Errorf("import over a thread in a full Redis: %v, want ErrFull", err)
	}
	if _, err := s.Append(ctx, kept.ID, "me", memory.Exchange{ID: "x-1"}, []memory.Turn{
		{Role: memory.RoleUser, Content: "more"}, {Role: memory.RoleAssistant, Content: "more, answered"}},
		10, now, now.Add(time.Hour)); !errors.Is(err, memory.ErrFull) {
		t.Errorf("append in a full Redis: %v, want ErrFull", err)
	}
	if err := s.SaveBlobs(ctx, []memory.Blob{{SHA256: fmt.Sprintf("%064x", "new.go"), Content: "package new\n"}},
		now, now.Add(time.Hour)); !errors.Is(err, memory.ErrFull) {
		t.Errorf("save a file in a full Redis: %v, want ErrFull", err)
	}
	listed, err := s.Summaries(ctx, memory.ListParams{ClientID: "me", Limit: 10}, now)
	if err != nil {
		t.Fatalf("list the client's threads in a full Redis: %v", err)
	}
	var ids []string
	for _, th := range listed {
		ids = append(ids, th.Thread.ID)
	}
	if diff := cmp.Diff([]string{kept.ID}, ids); diff != "" {
		t.Errorf("the client's threads listed in a full Redis (-want +got):\n%s", diff)
	}
	for _, r := range []struct {
		name  string
		store *Store
	}{{"the store that keeps its turns", s}, {"another store", openURL(t, url)}} {
		got, err := r.store.Get(ctx, kept.ID, now)
		if err != nil {
			t.Fatalf("%s reads the thread a full Redis holds: %v", r.name, err)
		}
		want := []memory.Turn{{Role: memory.RoleUser, Content: "kept", Files: kept.Turns[0].Files},
			{Role: memory.RoleAssistant, Content: "kept, answered"}}
		if diff := cmp.Diff(want, got.Turns); diff != "" {
			t.Errorf("%s reads the thread a full Redis refused an import and an append of (-want +got):\n%s",
				r.name, diff)
		}
	}
	files, err := s.rdb.SMembers(ctx, s.filesKey(kept.ID)).Result()
	if diff := cmp.Diff([]string{kept.Turns[0].Files[0].SHA256}, files); err != nil || diff != "" {
		t.Errorf("the kept thread's files (-want +got), %v:\n%s", err, diff)
	}
}

// In a Cluster a thread and its client's index live on different nodes,
// written one after the other. When only the index's node is full, the
// thread's writes are stored and answered as stored: indexing is upkeep,
// which the thread's next write redoes once there is room.
func TestAWriteStoredIsAnsweredStoredWhenOnlyItsIndexIsRefused(t *testing.T) {
	t.Parallel()
	url, nodes := redistest.StartCluster(t, 3, redistest.NoPersistence...)
	s := openURL(t, url)
	var logs logtest.Buffer
	s.LogTo(slog.New(slog.NewTextHandler(&logs, nil)))
	ctx := context.Background()
	now := time.Now()
	cluster := s.rdb.(*redis.ClusterClient)
	nodeOf := func(key string) string {
		c, err := cluster.MasterForKey(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return c.Options().Addr
	}
	indexNode := nodeOf(s.clientKeys("me")[0])
	id := uuid.NewString()
	for nodeOf(s.metaKey(id)) == indexNode {
		id = uuid.NewString()
	}
	for _, n := range nodes {
		if n.Addr == indexNode {
			setMaxmemory(t, []*redistest.Server{n}, "1")
		}
	}
	th := fileThread(id, "q", "q.go", now)
	if err := s.Create(ctx, th); err != nil {
		t.Fatalf("create a thread whose index's node is full: %v, want it stored", err)
	}
	later := now.Add(time.Minute)
	if n, err := s.Append(ctx, id, "me", memory.Exchange{ID: "x-1"}, []memory.Turn{
		{Role: memory.RoleUser, Content: "more"}, {Role: memory.RoleAssistant, Content: "more, answered"}},
		10, later, later.Add(time.Hour)); err != nil || n != 4 {
		t.Fatalf("append to it = %d, %v; want 4, stored", n, err)
	}
	if got, err := openURL(t, url).Get(ctx, id, later); err != nil || len(got.Turns) != 4 {
		t.Fatalf("read it back: %v; want its 4 turns", err)
	}
	for _, said := range []string{"a thread was stored, but indexing it", "an exchange was stored, but Redis is full"} {
		if !strings.Contains(logs.String(), said) {
			t.Errorf("the log does not say %q:\n%s", said, logs.String())
		}
	}
	setMaxmemory(t, nodes, "0")
	last := later.Add(time.Minute)
	if _, err := s.Append(ctx, id, "me", memory.Exchange{ID: "x-2"}, []memory.Turn{
		{Role: memory.RoleUser, Content: "again"}}, 10, last, last.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	listed, err := s.Summaries(ctx, memory.ListParams{ClientID: "me", Limit: 10}, last)
	if err != nil || len(listed) != 1 || listed[0].Thread.ID != id {
		t.Errorf("the client's threads once there is room = %d, %v; want the one written again", len(listed), err)
	}
}

// A full Redis that memory has not yet put its marker in (a shared Redis
// a neighbour filled first) is checked all the same: memory serves its
// reads, and puts the marker in once there is room.
func TestAFullRedisWithoutAMarkerIsChecked(t *testing.T) {
	t.Parallel()
	srv := redistest.StartWith(t, redistest.AOF...)
	s := open(t, srv)
	ctx := context.Background()
	setMaxmemory(t, []*redistest.Server{srv}, "1")
	if _, err := s.Check(ctx, time.Now()); err != nil {
		t.Fatalf("check a full Redis without memory's marker: %v", err)
	}
	setMaxmemory(t, []*redistest.Server{srv}, "0")
	if _, err := s.Check(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.Get(ctx, s.markerKey()).Err(); err != nil {
		t.Errorf("the marker once Redis has room: %v", err)
	}
}

// Threads an older release indexed in its one index move to their
// clients' indexes only when the new entries are written: a full Redis
// that refuses those must leave the old ones, or the threads would drop
// out of every listing.
func TestThreadsMoveFromTheOldIndexOnlyWhenIndexedAnew(t *testing.T) {
	t.Parallel()
	srv := redistest.StartWith(t, redistest.AOF...)
	s := open(t, srv)
	ctx := context.Background()
	now := time.Now()
	th := fileThread(uuid.NewString(), "q", "q.go", now)
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Check(ctx, now); err != nil {
		t.Fatal(err)
	}
	// As an older release left it: the thread in the one old index only.
	if err := s.rdb.Del(ctx, s.clientKeys("me")...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.ZAdd(ctx, s.oldIndexKey(), redis.Z{Score: 1, Member: th.ID}).Err(); err != nil {
		t.Fatal(err)
	}
	setMaxmemory(t, []*redistest.Server{srv}, "1")
	h, err := s.Check(ctx, now)
	if err != nil || h.Migrated != 0 || !errors.Is(h.MigrateErr, memory.ErrFull) {
		t.Errorf("check in a full Redis = %d moved, %v, %v; want 0 moved, ErrFull", h.Migrated, h.MigrateErr, err)
	}
	setMaxmemory(t, []*redistest.Server{srv}, "0")
	if h, err := s.Check(ctx, now); err != nil || h.Migrated != 1 {
		t.Errorf("check once Redis has room = %d moved, %v; want 1", h.Migrated, err)
	}
	listed, err := s.Summaries(ctx, memory.ListParams{ClientID: "me", Limit: 10}, now)
	if err != nil || len(listed) != 1 {
		t.Errorf("the client's threads = %d, %v; want the one moved", len(listed), err)
	}
}

// A thread an import replaces keeps nothing of the old one's hash, however
// many fields it had (another release's, say): none is read back into Lua.
func TestAReplaceClearsEveryFieldOfTheOldHash(t *testing.T) {
	t.Parallel()
	_, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	th := fileThread("t-1", "old", "old.go", now)
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	fields := make([]any, 0, 2*9_000)
	for i := range 9_000 {
		fields = append(fields, fmt.Sprint("later-release-", i), "x")
	}
	if err := s.rdb.HSet(ctx, s.metaKey(th.ID), fields...).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Import(ctx, []*memory.Thread{fileThread("t-1", "new", "new.go", now)}, true, now); err != nil {
		t.Fatal(err)
	}
	got, err := s.rdb.HKeys(ctx, s.metaKey(th.ID)).Result()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"card", "client", "expires_ms", "first", "meta", "prompt", "rev", "updated_ns", "weight"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the replaced thread's hash (-want +got):\n%s", diff)
	}
}

// fileThread is client "me"'s live thread of one exchange, whose question
// used file path.
func fileThread(id, said, path string, now time.Time) *memory.Thread {
	return &memory.Thread{ID: id, ToolName: "chat", ClientID: "me", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{
			{Role: memory.RoleUser, Content: said, Files: []memory.FileRef{{Path: "/" + path,
				SHA256: fmt.Sprintf("%064x", path)}}},
			{Role: memory.RoleAssistant, Content: said + ", answered"}}}
}

// setMaxmemory sets every node's maxmemory: "1" fills Redis at once (its
// policy stays Redis's default, noeviction), "0" lifts the limit.
func setMaxmemory(t *testing.T, nodes []*redistest.Server, bytes string) {
	t.Helper()
	for _, n := range nodes {
		c := redis.NewClient(&redis.Options{Addr: n.Addr})
		err := c.ConfigSet(context.Background(), "maxmemory", bytes).Err()
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
}

func openURL(t *testing.T, url string) *Store {
	t.Helper()
	s, err := Open(url, "", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
