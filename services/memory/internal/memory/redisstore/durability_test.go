package redisstore

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/google/uuid"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/platform/redistest"
)

func open(t *testing.T, srv *redistest.Server) *Store {
	t.Helper()
	return openURL(t, srv.URL())
}

func TestPersistenceIsRead(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		flags []string
		want  bool
	}{
		{"append-only file", redistest.AOF, true},
		{"RDB snapshots", []string{"--save", "3600 1", "--appendonly", "no"}, true},
		{"neither", redistest.NoPersistence, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t, redistest.StartWith(t, tc.flags...))
			h, err := s.Check(context.Background(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if !h.Persistence.Known || h.Persistence.Durable != tc.want {
				t.Errorf("persistence = %+v, want known and durable %v", h.Persistence, tc.want)
			}
			warned := strings.Join(s.Warnings(), "\n")
			if tc.want != (warned == "") || !tc.want && !strings.Contains(warned, "without persistence") {
				t.Errorf("warnings = %q", warned)
			}
		})
	}
}

// TestRestartThatLostDataIsNoticed: a Redis that restarts empty loses
// memory's marker; each store notices, says when, and a thread missing
// since reads as lost rather than expired.
func TestRestartThatLostDataIsNoticed(t *testing.T) {
	t.Parallel()
	srv := redistest.StartWith(t, redistest.NoPersistence...)
	ctx := context.Background()
	now := time.Now()
	noticed := make(chan time.Time, 2)
	a, b := open(t, srv), open(t, srv) // two memory replicas
	a.OnDataLoss(time.Hour, func(at time.Time) { noticed <- at })
	b.OnDataLoss(time.Hour, func(at time.Time) { noticed <- at })
	for _, s := range []*Store{a, b} {
		if h, err := s.Check(ctx, now); err != nil || !h.LostAt.IsZero() {
			t.Fatalf("first check: %+v, %v; want no loss", h, err)
		}
	}
	th := create(t, a, "me", now, time.Hour)

	srv.Stop()
	srv.Restart(t)
	_, err := a.Get(ctx, th.ID, now)
	var lost *memory.LostError
	if !errors.Is(err, memory.ErrNotFound) || !errors.As(err, &lost) {
		t.Fatalf("Get after the loss: err = %v, want a LostError that is also ErrNotFound", err)
	}
	if at := <-noticed; lost.At.Sub(at).Abs() > time.Second {
		t.Errorf("noticed at %v, the error says %v", at, lost.At)
	}
	// The other replica notices at its next check: the marker it knew is
	// gone, replaced by a's.
	h, err := b.Check(ctx, now)
	if err != nil || h.LostAt.IsZero() {
		t.Errorf("b's check after the loss: %+v, %v; want the loss", h, err)
	}
	<-noticed
	if _, err := b.Append(ctx, th.ID, "me", memory.Exchange{}, th.Turns, 10, now,
		now.Add(time.Hour)); !errors.As(err, &lost) {
		t.Errorf("Append after the loss: err = %v, want a LostError", err)
	}
	warned := strings.Join(b.Warnings(), "\n")
	if !strings.Contains(warned, "lost its data") {
		t.Errorf("warnings = %q, want the loss named", warned)
	}
	if _, err := a.Get(ctx, uuid.NewString(), now.Add(2*time.Hour)); errors.As(err, &lost) {
		t.Errorf("an hour past the loss, a missing thread still reads as lost: %v", err)
	}
}

// TestRestartWithPersistenceLosesNothing: an append-only Redis keeps the
// marker, so its restart is no loss.
func TestRestartWithPersistenceLosesNothing(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	s := open(t, srv)
	s.OnDataLoss(time.Hour, func(at time.Time) { t.Errorf("a loss noticed at %v", at) })
	ctx := context.Background()
	now := time.Now()
	if _, err := s.Check(ctx, now); err != nil {
		t.Fatal(err)
	}
	th := create(t, s, "me", now, time.Hour)
	srv.Stop()
	srv.Restart(t)
	h, err := s.Check(ctx, now)
	if err != nil || !h.LostAt.IsZero() {
		t.Errorf("check after the restart: %+v, %v; want no loss", h, err)
	}
	got, err := s.Get(ctx, th.ID, now)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(th.ID, got.ID); diff != "" {
		t.Error(diff)
	}
	_, err = s.Get(ctx, uuid.NewString(), now)
	if !errors.Is(err, memory.ErrNotFound) || errors.As(err, new(*memory.LostError)) {
		t.Errorf("an unknown thread: err = %v, want plain ErrNotFound", err)
	}
}

// TestEvictionIsReadAndWarnedOf: a Redis that evicts keys when full can
// take one key of a thread and leave the rest (its turns without its hash,
// its files without their content), so memory warns of it, whether CONFIG
// GET answers or only INFO does, and of settings it cannot read; a Redis
// that cannot evict raises no warning.
func TestEvictionIsReadAndWarnedOf(t *testing.T) {
	t.Parallel()
	limited := func(policy string, more ...string) []string {
		return append([]string{"--maxmemory", "100mb", "--maxmemory-policy", policy}, more...)
	}
	noConfig := []string{"--rename-command", "CONFIG", ""}
	for _, tc := range []struct {
		name  string
		flags []string
		want  Eviction
	}{
		{"allkeys-lru with a maxmemory", limited("allkeys-lru"), Eviction{Known: true, Evicts: true}},
		{"volatile-ttl with a maxmemory", limited("volatile-ttl"), Eviction{Known: true, Evicts: true}},
		{"allkeys-lru, CONFIG refused", limited("allkeys-lru", noConfig...), Eviction{Known: true, Evicts: true}},
		{"noeviction with a maxmemory", limited("noeviction"), Eviction{Known: true}},
		{"allkeys-lru without a maxmemory", []string{"--maxmemory", "0", "--maxmemory-policy", "allkeys-lru"},
			Eviction{Known: true}},
		{"noeviction, CONFIG refused", limited("noeviction", noConfig...), Eviction{Known: true}},
		{"CONFIG and INFO refused", limited("noeviction", append(noConfig, "--rename-command", "INFO", "")...),
			Eviction{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := open(t, redistest.StartWith(t, append(slices.Clone(redistest.AOF), tc.flags...)...))
			h, err := s.Check(context.Background(), time.Now())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, h.Eviction, cmpopts.IgnoreFields(Eviction{}, "Detail")); diff != "" {
				t.Errorf("eviction (-want +got):\n%s", diff)
			}
			warned := strings.Contains(strings.Join(s.Warnings(), "\n"), "maxmemory-policy")
			if want := tc.want.Evicts || !tc.want.Known; warned != want {
				t.Errorf("warnings = %q; want one of eviction: %v", s.Warnings(), want)
			}
		})
	}
}

// TestAClustersSettingsReadAlike: a Cluster's masters answer a check in
// any order; what the check reads of them must not change with it, or the
// watch logs the same settings again at every check.
func TestAClustersSettingsReadAlike(t *testing.T) {
	t.Parallel()
	url, _ := redistest.StartCluster(t, 3, append(slices.Clone(redistest.AOF), "--maxmemory", "100mb",
		"--maxmemory-policy", "allkeys-lru")...)
	s := openURL(t, url)
	first, err := s.Check(context.Background(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !first.Persistence.Durable || !first.Eviction.Evicts {
		t.Errorf("a Cluster of masters with an append-only file that evict read as %+v", first)
	}
	for range 20 {
		h, err := s.Check(context.Background(), time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first.Persistence, h.Persistence); diff != "" {
			t.Fatalf("persistence read again (-first +now):\n%s", diff)
		}
		if diff := cmp.Diff(first.Eviction, h.Eviction); diff != "" {
			t.Fatalf("eviction read again (-first +now):\n%s", diff)
		}
	}
}
