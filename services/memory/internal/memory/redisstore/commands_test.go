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
