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

// redisTime is what Redis ran since its statistics were last reset, by
// INFO commandstats: scripts (EVAL, EVALSHA and their read-only forms),
// and the commands they called, with the time it spent in each. The
// statistics' own commands are left out.
type redisTime struct {
	scripts, commands           int
	scriptMicros, commandMicros float64
}

func commandStats(tb testing.TB, rdb *redis.Client) redisTime {
	tb.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var rt redisTime
	for _, line := range strings.Split(info, "\n") {
		name, stats, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok || !strings.HasPrefix(name, "cmdstat_") || strings.HasPrefix(name, "cmdstat_config") ||
			name == "cmdstat_info" {
			continue
		}
		var calls int
		var micros float64
		for _, kv := range strings.Split(stats, ",") {
			key, value, _ := strings.Cut(kv, "=")
			switch key {
			case "calls":
				calls, err = strconv.Atoi(value)
			case "usec":
				micros, err = strconv.ParseFloat(value, 64)
			}
			if err != nil {
				tb.Fatalf("commandstats line %q: %v", line, err)
			}
		}
		if strings.HasPrefix(name, "cmdstat_eval") {
			rt.scripts += calls
			rt.scriptMicros += micros
		} else {
			rt.commands += calls
			rt.commandMicros += micros
		}
	}
	return rt
}

// BenchmarkAppendInRedis is what the usual append costs Redis itself, on
// threads of 50 short turns, as a continued chat's: its time in the script
// (script-µs), the commands the script called (commands) and their own
// time (commands-µs). Two of the commands, extending the client's index,
// run only when an append comes in another millisecond than the one
// before, so that count moves a little with the machine's speed.
//
//	go test -run '^$' -bench AppendInRedis -benchtime 10000x ./services/memory/internal/memory/redisstore
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
	rt := commandStats(b, rdb)
	b.ReportMetric(float64(rt.commands)/float64(b.N), "commands/append")
	b.ReportMetric(rt.commandMicros/float64(b.N), "commands-µs/append")
	b.ReportMetric(rt.scriptMicros/float64(b.N), "script-µs/append")
}
