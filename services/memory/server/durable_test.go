package server

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/logtest"
	"github.com/zenmcp/zen/services/platform/redistest"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRequireDurableRedisIsParsed(t *testing.T) {
	t.Parallel()
	_, err := Load(env(map[string]string{"REDIS_URL": "redis://127.0.0.1:1", "ZEN_REQUIRE_DURABLE_REDIS": "maybe"}))
	if err == nil || !strings.Contains(err.Error(), "ZEN_REQUIRE_DURABLE_REDIS") {
		t.Errorf("err = %v, want one naming ZEN_REQUIRE_DURABLE_REDIS", err)
	}
}

func TestRequireDurableRedisRefusesOneWithoutPersistence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		flags   []string
		require string
		fails   bool
	}{
		{"required, none", redistest.NoPersistence, "true", true},
		{"required, append-only", redistest.AOF, "true", false},
		{"not required, none", redistest.NoPersistence, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.StartWith(t, tc.flags...)
			cfg, err := Load(env(map[string]string{"REDIS_URL": srv.URL(), "ZEN_REQUIRE_DURABLE_REDIS": tc.require}))
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(cfg, slog.New(slog.DiscardHandler))
			if tc.fails {
				if err == nil || !strings.Contains(err.Error(), "ZEN_REQUIRE_DURABLE_REDIS") {
					t.Errorf("err = %v, want a startup error naming ZEN_REQUIRE_DURABLE_REDIS", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			s.Close()
		})
	}
}

// TestWatchWarnsOfARedisThatPutsThreadsAtRisk: the watch logs the risk
// and memory's settings carry it, for /readyz, in the same words, while
// memory still serves.
func TestWatchWarnsOfARedisThatPutsThreadsAtRisk(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"without persistence", redistest.NoPersistence, "without persistence"},
		{"evicting keys", append(slices.Clone(redistest.AOF), "--maxmemory", "64mb", "--maxmemory-policy",
			"volatile-lru"), "evicts keys"},
		{"hiding its eviction settings", append(slices.Clone(redistest.AOF), "--rename-command", "INFO", ""),
			"eviction settings"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, logs := newLogged(t, redistest.StartWith(t, tc.flags...))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			serving := make(chan bool, 10)
			go s.Watch(ctx, func(ok bool) { serving <- ok })
			if !<-serving {
				t.Fatal("memory does not serve with a Redis that answers")
			}
			if !strings.Contains(logs.String(), tc.want) {
				t.Errorf("the log does not warn (%q):\n%s", tc.want, logs.String())
			}
			settings, err := s.api.GetSettings(ctx, &memoryv1.GetSettingsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if w := strings.Join(settings.GetWarnings(), "\n"); !strings.Contains(w, tc.want) {
				t.Errorf("settings warnings = %q, want %q", w, tc.want)
			}
			for _, w := range settings.GetWarnings() {
				if risk, _, _ := strings.Cut(w, "; "); !strings.Contains(logs.String(), "memory "+risk) {
					t.Errorf("the log words the warning %q otherwise:\n%s", risk, logs.String())
				}
			}
		})
	}
}

// TestWatchLogsAStoppedMoveOnce: moving an older release's index stops
// while Redis is full, at every check; the watch says so once, not every
// two seconds.
func TestWatchLogsAStoppedMoveOnce(t *testing.T) {
	t.Parallel()
	srv := redistest.StartWith(t, redistest.AOF...)
	s, logs := newLogged(t, srv)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer rdb.Close()
	// A live thread an older release indexed in its one index only.
	expires := strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10)
	err := rdb.HSet(ctx, "zen:{t-1}:meta", "client", "me", "updated_ns", "1", "expires_ms", expires).Err()
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.ZAdd(ctx, "zen:index", redis.Z{Score: 1, Member: "t-1"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.ConfigSet(ctx, "maxmemory", "1").Err(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := s.redis.check(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := strings.Count(logs.String(), "moving threads into per-client indexes stopped"); n != 1 {
		t.Errorf("three checks of a full Redis logged the stopped move %d times, want 1:\n%s", n, logs.String())
	}
}

// newLogged is memory on srv, logging in JSON to the buffer it returns.
func newLogged(t *testing.T, srv *redistest.Server) (*Server, *logtest.Buffer) {
	t.Helper()
	s, logs, _ := newLoggedWith(t, map[string]string{"REDIS_URL": srv.URL()})
	return s, logs
}

// newLoggedWith is memory configured by vars, logging in JSON to the
// buffer it returns, with its configuration.
func newLoggedWith(t *testing.T, vars map[string]string) (*Server, *logtest.Buffer, Config) {
	t.Helper()
	cfg, err := Load(env(vars))
	if err != nil {
		t.Fatal(err)
	}
	logs := &logtest.Buffer{}
	s, err := New(cfg, slog.New(slog.NewJSONHandler(logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, logs, cfg
}
