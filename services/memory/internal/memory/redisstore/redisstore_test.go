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
	"github.com/zenmcp/zen/services/memory/internal/memory/storetest"
	"github.com/zenmcp/zen/services/platform/redistest"
)

func TestConformanceMiniredis(t *testing.T) {
	for _, compress := range []bool{false, true} {
		storetest.Run(t, func(t *testing.T) memory.Store {
			mr := miniredis.RunT(t)
			return New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), "", compress)
		})
	}
}

func TestConformanceRedisServer(t *testing.T) {
	srv := redistest.Start(t)
	storetest.Run(t, func(t *testing.T) memory.Store {
		s, err := Open(srv.URL(), "test:"+uuid.NewString()+":", true)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestReadsSeeOtherProcessesWrites shares one Redis between two stores, as
// memory's replicas do.
func TestReadsSeeOtherProcessesWrites(t *testing.T) {
	storetest.RunShared(t, func(t *testing.T) (memory.Store, memory.Store) {
		mr := miniredis.RunT(t)
		return New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), "", false),
			New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), "", true)
	})
}

func TestEveryKeyHasATTL(t *testing.T) {
	mr := miniredis.RunT(t)
	s := New(redis.NewClient(&redis.Options{Addr: mr.Addr()}), "", false)
	now := time.Now()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour),
		Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q"}}}
	if err := s.Create(context.Background(), th); err != nil {
		t.Fatal(err)
	}
	answer := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}}
	if _, err := s.Append(context.Background(), th.ID, "", memory.Exchange{ID: "x-1"}, answer, 10, now,
		now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for _, k := range mr.Keys() {
		if ttl := mr.TTL(k); ttl <= 0 || ttl > time.Hour {
			t.Errorf("key %s has TTL %v, want (0, 1h]", k, ttl)
		}
	}
	if len(mr.Keys()) != 5 {
		t.Errorf("keys = %v, want meta, turns, exchanges and the client's index (two keys)", mr.Keys())
	}
	mr.FastForward(time.Hour + time.Second)
	if len(mr.Keys()) != 0 {
		t.Errorf("after the TTL, keys remain: %v", mr.Keys())
	}
}

// An append keeps every key of its thread alive as long as the thread,
// those it did not write included: the thread's turns, its files, the
// exchanges it knows.
func TestAnAppendKeepsTheWholeThreadAlive(t *testing.T) {
	t.Parallel()
	mr, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: "me", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour)}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	question := []memory.Turn{{Role: memory.RoleUser, Content: "q",
		Files: []memory.FileRef{{Path: "/f", SHA256: "f1"}}}}
	if _, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: "x-1"}, question, 10, now,
		now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Early in the first hour, when the files' keep-alive reaches past the
	// new expiry already: the append must still extend their set.
	later := now.Add(10 * time.Minute)
	mr.FastForward(10 * time.Minute)
	answer := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}}
	if _, err := s.Append(ctx, th.ID, "me", memory.Exchange{}, answer, 10, later, later.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	mr.FastForward(50*time.Minute + time.Second) // past the first append's hour
	left := 10*time.Minute - time.Second
	for _, k := range s.threadKeys(th.ID) {
		if ttl := mr.TTL(k); !mr.Exists(k) || ttl <= 0 || ttl > left {
			t.Errorf("%s: exists %v, TTL %v; want it to live as long as the thread, %v more",
				k, mr.Exists(k), ttl, left)
		}
	}
	got, err := s.Get(ctx, th.ID, now.Add(time.Hour+time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Turns) != 2 {
		t.Errorf("the thread holds %d turns, want 2", len(got.Turns))
	}
	if n, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: "x-1"}, question, 10, later,
		later.Add(time.Hour)); err != nil || n != 2 {
		t.Errorf("a retry of the first exchange = %d, %v; want 2, nil", n, err)
	}
}

func TestCompressionShrinksLargeTurnsAndReadsBothForms(t *testing.T) {
	mr := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	ctx := context.Background()
	now := time.Now()
	big := strings.Repeat("the same sentence again and again. ", 400)
	sizes := map[bool]int{}
	var ids []string
	for _, compress := range []bool{false, true} {
		th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour),
			Turns: []memory.Turn{{Role: memory.RoleUser, Content: big}}}
		if err := New(rdb, "", compress).Create(ctx, th); err != nil {
			t.Fatal(err)
		}
		v, _ := mr.List("zen:{" + th.ID + "}:turns")
		sizes[compress] = len(v[0])
		ids = append(ids, th.ID)
	}
	if sizes[true]*5 > sizes[false] {
		t.Errorf("compressed %d bytes vs %d plain; want at least 5x smaller", sizes[true], sizes[false])
	}
	reader := New(rdb, "", false) // compression off, reading both forms
	for _, id := range ids {
		got, err := reader.Get(ctx, id, now)
		if err != nil || got.Turns[0].Content != big {
			t.Errorf("read back %s: %v", id, err)
		}
	}
}

func TestRedisDownIsUnavailableAndRecovers(t *testing.T) {
	srv := redistest.Start(t)
	s, err := Open(srv.URL(), "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	now := time.Now()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour),
		Turns: []memory.Turn{{Role: memory.RoleUser, Content: "acknowledged"}}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	if _, err := s.Get(ctx, th.ID, now); !errors.Is(err, memory.ErrUnavailable) {
		t.Errorf("with Redis down: err = %v, want ErrUnavailable", err)
	}
	srv.Restart(t)
	got, err := s.Get(ctx, th.ID, now)
	if err != nil || got.Turns[0].Content != "acknowledged" {
		t.Errorf("after Redis came back: %v %v", got, err)
	}
}

func TestURLForms(t *testing.T) {
	tests := []struct {
		url  string
		want string
	}{
		{"redis://127.0.0.1:6379/0", "*redis.Client"},
		{"redis://127.0.0.1:26379?master_name=mymaster&addr=127.0.0.1:26380", "*redis.Client"},
		{"redis://127.0.0.1:7000?cluster=true&addr=127.0.0.1:7001", "*redis.ClusterClient"},
	}
	for _, tt := range tests {
		c, err := client(tt.url)
		if err != nil {
			t.Errorf("%s: %v", tt.url, err)
			continue
		}
		if got := typeName(c); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.url, got, tt.want)
		}
		c.Close()
	}
	for _, bad := range []string{"http://x", "redis://h:1?colour=red", "redis://:S3cr3t%zzPassw0rd@127.0.0.1:6390/0",
		"rediss://u:S3cr3t%zzPassw0rd@h:1?master_name=m", "redis://:S3cr3t%zzPassw0rd@h:1?cluster=true",
		// net/url splits these early, and its error quotes the password's start.
		"redis://:S3cr3t?Passw0rd@h:1/0", "redis://:S3cr3t#Passw0rd@h:1/0", "redis://:S3cr3t/Passw0rd@h:1/0"} {
		_, err := client(bad)
		if err == nil || !strings.Contains(err.Error(), "REDIS_URL") {
			t.Errorf("%s: err = %v, want one naming REDIS_URL", bad, err)
		}
		// The error reaches stderr and logs: a password in it is out.
		if err != nil && strings.Contains(err.Error(), "S3cr3t") {
			t.Errorf("%s: the error quotes the password: %v", bad, err)
		}
	}
}

func typeName(v any) string {
	switch v.(type) {
	case *redis.Client:
		return "*redis.Client"
	case *redis.ClusterClient:
		return "*redis.ClusterClient"
	}
	return "other"
}

// A thread an earlier release wrote has no weight in its hash: it counts
// from nothing, and its appends are weighed from then on.
func TestAThreadWithoutAWeightCountsFromNothing(t *testing.T) {
	t.Parallel()
	_, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	th := fileThread("t-1", "old", "old.go", now)
	th.Weight = memory.MaxThreadWeight // as if it were written whole at the bound
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	if err := s.rdb.HDel(ctx, s.metaKey(th.ID), "weight").Err(); err != nil {
		t.Fatal(err)
	}
	answer := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}}
	if _, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: "x-1", Weight: memory.MaxThreadWeight}, answer, 10,
		now, now.Add(time.Hour)); err != nil {
		t.Fatalf("an append to a thread without a weight: %v", err)
	}
	if _, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: "x-2", Weight: 1}, answer, 10, now,
		now.Add(time.Hour)); !errors.Is(err, memory.ErrThreadFull) {
		t.Errorf("an append past the weight it was given: %v, want ErrThreadFull", err)
	}
}

// A turn is stored as its text reads: encoding/json's HTML escapes made a
// turn of '<' six times its size in Redis.
func TestMarkupIsStoredAsItIs(t *testing.T) {
	t.Parallel()
	_, s := miniStore(t)
	ctx := context.Background()
	now := time.Now()
	th := fileThread("t-1", strings.Repeat("<", 6000), "a.go", now)
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	stored, err := s.rdb.LIndex(ctx, s.turnsKey(th.ID), 0).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(stored) > 6200 {
		t.Errorf("a turn of 6000 bytes of markup is stored as %d bytes", len(stored))
	}
}
