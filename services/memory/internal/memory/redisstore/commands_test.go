package redisstore

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/redistest"
)

// commandsRun is how many commands Redis has run since its statistics were
// last reset, scripts' own commands included and the scripts themselves,
// and the statistics' commands, left out.
func commandsRun(t testing.TB, rdb *redis.Client) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":calls=")
		if !ok || strings.HasPrefix(name, "cmdstat_eval") || strings.HasPrefix(name, "cmdstat_config") ||
			name == "cmdstat_info" {
			continue
		}
		calls, _, _ := strings.Cut(stats, ",")
		c, err := strconv.Atoi(calls)
		if err != nil {
			t.Fatalf("commandstats line %q: %v", line, err)
		}
		n += c
	}
	return n
}

// Redis spends a script's time mostly on the commands it calls, and one
// Redis serves every replica, so the usual append (a new exchange, no new
// file) is held to the commands it needs: read the hash, record the
// exchange, push the turns, write the hash, keep the thread's four keys
// alive, and index the thread for its client (two of those seven commands
// only when the index would not outlive the thread).
func TestTheUsualAppendRunsFewCommands(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := open(t, srv)
	rdb := s.rdb.(*redis.Client)
	ctx := context.Background()
	now := time.Now()
	th := &memory.Thread{ID: uuid.NewString(), ToolName: "chat", ClientID: "me", CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(time.Hour), Turns: []memory.Turn{{Role: memory.RoleUser, Content: "q",
			Files: []memory.FileRef{{Path: "/f", SHA256: "f1"}}}}}
	if err := s.Create(ctx, th); err != nil {
		t.Fatal(err)
	}
	appendOne := func(at time.Time) {
		t.Helper()
		answer := []memory.Turn{{Role: memory.RoleAssistant, Content: "a"}, {Role: memory.RoleUser, Content: "q"}}
		if _, err := s.Append(ctx, th.ID, "me", memory.Exchange{ID: uuid.NewString()}, answer, 1000, at,
			at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	appendOne(now) // keeps the thread's file alive past the thread, which the appends after need not
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	const appends = 10
	for i := range appends {
		appendOne(now.Add(time.Duration(i+1) * time.Second))
	}
	const want = 15
	if got := float64(commandsRun(t, rdb)) / appends; got > want {
		t.Errorf("an append ran %.1f commands in Redis, want at most %d", got, want)
	}
}

// BenchmarkAppendInRedis is what the usual append costs Redis itself: its
// time in the script and the commands the script runs (INFO commandstats),
// on threads of 50 short turns, as a continued chat's.
//
//	go test -run '^$' -bench AppendInRedis -benchtime 5000x ./services/memory/internal/memory/redisstore
func BenchmarkAppendInRedis(b *testing.B) {
	// The local cluster's persistence: an append-only file fsynced every second.
	srv := redistest.StartWith(b, "--save", "", "--appendonly", "yes", "--appendfsync", "everysec")
	s, err := Open(srv.URL(), "", false)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rdb := s.rdb.(*redis.Client)
	ctx := context.Background()
	now := time.Now()
	var turns []memory.Turn
	for i := range 50 {
		turns = append(turns, memory.Turn{Role: memory.RoleUser, Content: "a prompt of about forty bytes, " +
			strconv.Itoa(i), Timestamp: now})
	}
	const perThread = 5
	ids := make([]string, (b.N+perThread-1)/perThread)
	for i := range ids {
		ids[i] = uuid.NewString()
		th := &memory.Thread{ID: ids[i], ToolName: "chat", ClientID: "me", CreatedAt: now, UpdatedAt: now,
			ExpiresAt: now.Add(3 * time.Hour), Turns: turns}
		if err := s.Create(ctx, th); err != nil {
			b.Fatal(err)
		}
	}
	exchange := []memory.Turn{{Role: memory.RoleUser, Content: "a prompt of about forty bytes, again"},
		{Role: memory.RoleAssistant, Content: "fake reply"}}
	if err := rdb.ConfigResetStat(ctx).Err(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := range b.N {
		at := time.Now()
		if _, err := s.Append(ctx, ids[i/perThread], "me", memory.Exchange{ID: uuid.NewString()}, exchange, 1000,
			at, at.Add(3*time.Hour)); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(commandsRun(b, rdb))/float64(b.N), "commands/append")
	b.ReportMetric(scriptMicros(b, rdb)/float64(b.N), "redis-µs/append")
}

// scriptMicros is Redis's time in scripts since its statistics were reset.
func scriptMicros(tb testing.TB, rdb *redis.Client) float64 {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total float64
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_eval") {
			continue
		}
		for _, kv := range strings.Split(stats, ",") {
			if v, ok := strings.CutPrefix(kv, "usec="); ok {
				f, err := strconv.ParseFloat(v, 64)
				if err != nil {
					tb.Fatalf("commandstats line %q: %v", line, err)
				}
				total += f
			}
		}
	}
	return total
}
