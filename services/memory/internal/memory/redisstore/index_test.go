package redisstore

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/google/go-cmp/cmp"
	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

func miniStore(t *testing.T) (*miniredis.Miniredis, *Store) {
	t.Helper()
	mr := miniredis.RunT(t)
	s := New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), "", false)
	t.Cleanup(func() { s.Close() })
	return mr, s
}

// create stores a live thread of client, updated at now, with one exchange.
func create(t *testing.T, s *Store, client string, now time.Time, life time.Duration) *memory.Thread {
	t.Helper()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: client, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(life), Turns: []memory.Turn{
			{Role: memory.RoleUser, Content: "q", Timestamp: now},
			{Role: memory.RoleAssistant, Content: "a", Timestamp: now},
		}}
	if err := s.Create(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	return th
}

func ids[T any](items []T, id func(T) string) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = id(it)
	}
	return out
}

func summaryID(s memory.Summary) string { return s.Thread.ID }

// TestListingReadsOnlyTheClientsThreads: a client's listing costs the same
// however many threads other clients keep in the same Redis.
func TestListingReadsOnlyTheClientsThreads(t *testing.T) {
	t.Parallel()
	mr, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	for i := range 300 {
		create(t, s, "other", now.Add(time.Duration(i)*time.Second), time.Hour)
	}
	var want []string
	for i := range 3 {
		th := create(t, s, "me", now.Add(-time.Duration(i)*time.Second), time.Hour)
		want = append(want, th.ID)
	}
	list := func() []memory.Summary {
		got, err := s.Summaries(ctx, memory.ListParams{ClientID: "me", Limit: 21}, now)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	list() // dials the connections, whose handshakes count as commands too
	before := mr.CommandCount()
	got := list()
	// The index's range, then a script for each thread, which counts as
	// itself and its three reads.
	if n := mr.CommandCount() - before; n > 1+4*3 {
		t.Errorf("listing 3 threads among 303 took %d Redis commands, want at most %d", n, 1+4*3)
	}
	if diff := cmp.Diff(want, ids(got, summaryID)); diff != "" {
		t.Errorf("listing (-want +got):\n%s", diff)
	}
}

// TestSummariesAreOnePipeline: a page of summaries reads each thread's
// metadata, turn count and first turns in one round trip, never the
// whole history.
func TestSummariesAreOnePipeline(t *testing.T) {
	t.Parallel()
	mr, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	for i := range 20 {
		th := create(t, s, "me", now.Add(time.Duration(i)*time.Second), time.Hour)
		for range 10 {
			if _, err := s.Append(ctx, th.ID, "me", memory.Exchange{}, th.Turns, 100, now,
				now.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := s.Summaries(ctx, memory.ListParams{ClientID: "me", Limit: 21}, now); err != nil {
		t.Fatal(err) // dials the connections, whose handshakes count as commands too
	}
	before := mr.CommandCount()
	got, err := s.Summaries(ctx, memory.ListParams{ClientID: "me", Limit: 21}, now)
	if err != nil {
		t.Fatal(err)
	}
	if n := mr.CommandCount() - before; n > 1+4*20 { // the range, a script of three reads a thread
		t.Errorf("20 summaries took %d Redis commands, want at most %d", n, 1+4*20)
	}
	if len(got) != 20 || got[0].TurnCount != 22 || got[0].FirstPrompt != "q" {
		t.Errorf("got %d summaries, the first %+v; want 20 of 22 turns starting with q", len(got), got[0])
	}
}

// TestIndexFollowsTheThreads: each client's index holds its live threads:
// a write adds one, a delete removes it, and a write sweeps out those that
// expired.
func TestIndexFollowsTheThreads(t *testing.T) {
	t.Parallel()
	mr, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	members := func() []string {
		t.Helper()
		m, err := mr.ZMembers(s.clientKeys("me")[0])
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	short := create(t, s, "me", now, time.Minute)
	kept := create(t, s, "me", now, time.Hour)
	deleted := create(t, s, "me", now, time.Hour)
	create(t, s, "other", now, time.Hour)
	if got := len(members()); got != 3 {
		t.Fatalf("index holds %d threads, want 3", got)
	}
	if err := s.Delete(ctx, deleted.ID); err != nil {
		t.Fatal(err)
	}
	later := now.Add(2 * time.Minute)
	mr.FastForward(2 * time.Minute)
	if _, err := s.Append(ctx, kept.ID, "me", memory.Exchange{}, kept.Turns, 100, later,
		later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{kept.ID}, members()); diff != "" {
		t.Errorf("index after a delete and an expiry (-want +got):\n%s (%s expired)", diff, short.ID)
	}
	for _, k := range s.clientKeys("me") {
		if ttl := mr.TTL(k); ttl < time.Hour-time.Second || ttl > time.Hour {
			t.Errorf("%s has TTL %v, want its newest thread's hour", k, ttl)
		}
	}
}

// TestOldIndexIsMigrated: threads written before the per-client index (in
// the one shared index) are listed after the store's check moves them.
func TestOldIndexIsMigrated(t *testing.T) {
	t.Parallel()
	mr, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	var want []string
	for i := range 3 {
		th := create(t, s, "me", now.Add(-time.Duration(i)*time.Second), time.Hour)
		want = append(want, th.ID)
		// The layout of old releases: one index of every client's threads.
		if _, err := mr.ZAdd("zen:index", float64(th.UpdatedAt.UnixMicro()), th.ID); err != nil {
			t.Fatal(err)
		}
	}
	expired := create(t, s, "me", now, time.Hour)
	if _, err := mr.ZAdd("zen:index", float64(now.UnixMicro()), expired.ID); err != nil {
		t.Fatal(err)
	}
	mr.Del("zen:{" + expired.ID + "}:meta")
	for _, k := range s.clientKeys("me") {
		mr.Del(k)
	}
	h, err := s.Check(ctx, now)
	if err != nil || h.MigrateErr != nil || h.Migrated != 3 {
		t.Fatalf("check: %+v, %v; want 3 threads moved", h, err)
	}
	got, err := s.Summaries(ctx, memory.ListParams{ClientID: "me", Limit: 10}, now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, ids(got, summaryID)); diff != "" {
		t.Errorf("listing after the migration (-want +got):\n%s", diff)
	}
	if mr.Exists("zen:index") {
		t.Error("the old index is still there")
	}
}

// A listing script's reply of another shape is an error, never a thread
// read as gone (which a listing would drop from its client's index).
func TestAListedReplyOfAnotherShapeIsAnError(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for name, reply := range map[string]any{
		"a map for the hash":     []any{map[any]any{"meta": "m"}, int64(1), []any{"t"}},
		"an odd hash":            []any{[]any{"meta"}, int64(1), []any{}},
		"a number for a turn":    []any{[]any{"meta", "m"}, int64(1), []any{int64(7)}},
		"a string for the count": []any{[]any{"meta", "m"}, "1", []any{"t"}},
		"two values":             []any{[]any{"meta", "m"}, int64(1)},
		"not a list":             "OK",
	} {
		cmd := redis.NewCmd(ctx)
		cmd.SetVal(reply)
		if _, _, _, err := threadReply(cmd); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	cmd := redis.NewCmd(ctx)
	cmd.SetVal([]any{[]any{"meta", "m", "expires_ms", "1"}, int64(2), []any{"t0", "t1"}})
	meta, count, turns, err := threadReply(cmd)
	if err != nil || meta["meta"] != "m" || meta["expires_ms"] != "1" || count != 2 || len(turns) != 2 {
		t.Errorf("a thread's reply: %v %d %v %v", meta, count, turns, err)
	}
}

// TestAClientOfManyThreadsIsWeighedWhole: ClientWeight reads a client's
// index a batch at a time; every batch counts, the last one short or full.
func TestAClientOfManyThreadsIsWeighedWhole(t *testing.T) {
	t.Parallel()
	_, s := miniStore(t)
	now := time.Now()
	for range weighBatch + 1 {
		create(t, s, "alice", now, time.Hour)
	}
	got, err := s.ClientWeight(context.Background(), "alice", now)
	if want := int64(weighBatch+1) * memory.ThreadOverhead; err != nil || got != want {
		t.Errorf("ClientWeight = %d, %v; want %d", got, err, want)
	}
}
