package redisstore

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"
	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// A Redis that keeps nothing on disk loses every thread when it restarts,
// and then nothing tells a missing thread from an expired one. So memory
// reads Redis's persistence settings, and keeps a marker key of its own:
// a random value with no TTL, which every memory process sharing the
// Redis learns. A marker gone, or changed under a process, means Redis
// lost its data (a restart without persistence, a flush, a failover to an
// empty replica); the process that notices first records when in the lost
// key, for every replica to tell clients. Limits: the marker lives in one
// Cluster slot, so it speaks for the master holding that slot; and a loss
// while no memory process runs is noticed by none.

// defaultLossWindow is how long a loss is reported when no window is set:
// the default conversation lifetime, after which the lost threads would
// have expired anyway.
const defaultLossWindow = 3 * time.Hour

func (s *Store) markerKey() string { return s.prefix + "marker" }
func (s *Store) lostKey() string   { return s.prefix + "lost" }

// OnDataLoss sets how long after a loss a missing thread reads as lost
// (the conversation lifetime), and notify, which hears each loss this
// store notices, when it notices it. Call it before the store is used.
func (s *Store) OnDataLoss(window time.Duration, notify func(at time.Time)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lossWindow, s.onLoss = window, notify
}

// Persistence is what Redis keeps on disk.
type Persistence struct {
	Known   bool   // Redis told: CONFIG GET answered, or INFO shows an append-only file
	Durable bool   // every master keeps an append-only file or RDB snapshots
	Detail  string // what the masters said, for the log
}

// Eviction is whether Redis removes keys when it is full. It removes them
// one at a time, so it can take part of a thread: its turns and not its
// hash, a file's content and not the thread naming it.
type Eviction struct {
	Known  bool   // Redis told: INFO memory answered
	Evicts bool   // some master has a maxmemory and a maxmemory-policy other than noeviction
	Detail string // what the masters said of their limits, for the log
}

// Health is what a Check found.
type Health struct {
	Persistence Persistence
	Eviction    Eviction
	// LostAt is when Redis was last found to have lost its data, within
	// the loss window; zero when it was not.
	LostAt time.Time
	// Migrated counts threads moved from the index of older releases;
	// MigrateErr is why the rest were not, this time. It is no reason to
	// stop serving: the next check moves on from there.
	Migrated   int
	MigrateErr error
}

// Check reads Redis's persistence and eviction settings, looks for the
// marker (noticing a loss) and moves threads from the index of older
// releases. An error is Redis not answering; settings it refuses to show
// are Persistence.Known or Eviction.Known false.
func (s *Store) Check(ctx context.Context, now time.Time) (Health, error) {
	var h Health
	var err error
	if h.Persistence, h.Eviction, err = s.settings(ctx); err != nil {
		return h, err
	}
	if h.LostAt, err = s.checkMarker(ctx, now); err != nil {
		return h, err
	}
	h.Migrated, h.MigrateErr = s.migrate(ctx, now)
	s.mu.Lock()
	s.health = &h
	s.mu.Unlock()
	return h, nil
}

// Risk is what p puts at risk, in words that follow "memory", and what an
// operator does about it; both empty when Redis keeps threads on disk.
// Warnings and the memory server's log both word it so.
func (p Persistence) Risk() (risk, fix string) {
	switch {
	case !p.Known:
		return "could not read Redis's persistence settings (CONFIG GET is refused): unless Redis keeps " +
			"an append-only file or RDB snapshots, a Redis restart loses every thread", "run Redis with appendonly yes"
	case !p.Durable:
		return "keeps threads in a Redis without persistence (neither appendonly nor save is on): " +
			"a Redis restart loses every thread", "run Redis with appendonly yes"
	}
	return "", ""
}

// Risk is what e puts at risk, in words that follow "memory", and what an
// operator does about it; both empty when Redis never evicts a key.
func (e Eviction) Risk() (risk, fix string) {
	const noEviction = "run Redis with maxmemory-policy noeviction, which refuses new writes instead"
	switch {
	case !e.Known:
		return "could not read Redis's eviction settings (INFO is refused): unless Redis's " +
			"maxmemory-policy is noeviction, a full Redis evicts parts of threads", noEviction
	case e.Evicts:
		return "keeps threads in a Redis that evicts keys when it is full (a maxmemory-policy other " +
			"than noeviction): an evicted key takes part of a thread with it", noEviction
	}
	return "", ""
}

// Warnings says, in words that follow "memory", what puts threads at risk,
// as the last Check found it.
func (s *Store) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	warn := func(risk, fix string) {
		if risk != "" {
			out = append(out, risk+"; "+fix)
		}
	}
	if h := s.health; h != nil {
		warn(h.Persistence.Risk())
		warn(h.Eviction.Risk())
	}
	if !s.lostAt.IsZero() && time.Since(s.lostAt) < s.lossWindow {
		out = append(out, "found that Redis lost its data at "+s.lostAt.UTC().Format("2006-01-02 15:04:05 MST")+
			" (a restart without persistence, or a flush): threads from before then are gone")
	}
	return out
}

// missing is the error for a thread that is absent: lost, when Redis lost
// its data within the window, else not found.
func (s *Store) missing(ctx context.Context, now time.Time) error {
	if at, err := s.checkMarker(ctx, now); err == nil && !at.IsZero() {
		return &memory.LostError{At: at}
	}
	return memory.ErrNotFound
}

// checkMarker compares the marker with the one this store last saw, puts
// one in place when there is none, and returns the time of the last loss
// when it is within the window before now.
func (s *Store) checkMarker(ctx context.Context, now time.Time) (time.Time, error) {
	s.mu.Lock()
	known, window, notify := s.marker, s.lossWindow, s.onLoss
	s.mu.Unlock()
	pipe := s.rdb.Pipeline()
	markerCmd, lostCmd := pipe.Get(ctx, s.markerKey()), pipe.Get(ctx, s.lostKey())
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return time.Time{}, failure(err)
	}
	marker, lost := markerCmd.Val(), lostCmd.Val()
	remarked := false
	if marker == "" {
		fresh := uuid.NewString()
		ok, err := s.rdb.SetNX(ctx, s.markerKey(), fresh, 0).Result()
		switch {
		case redis.IsOOMError(err):
			// A full Redis (a neighbour may have filled it first) is still
			// read from: the marker goes in at the first check with room.
		case err != nil:
			return time.Time{}, failure(err)
		case ok:
			marker, remarked = fresh, true
		default: // another process put one in place first
			if marker, err = s.rdb.Get(ctx, s.markerKey()).Result(); err != nil {
				return time.Time{}, failure(err)
			}
		}
	}
	s.mu.Lock()
	s.marker = marker
	s.mu.Unlock()
	if known == "" || marker == known {
		return s.recordedLoss(lost, now, window), nil
	}
	// The marker this store knew is gone: Redis lost its data. The process
	// that put the new marker in place records when; the others keep its
	// time, unless it has not written it yet.
	stamp := strconv.FormatInt(now.UnixMilli(), 10)
	switch {
	case remarked:
		if err := s.rdb.Set(ctx, s.lostKey(), stamp, window).Err(); err != nil {
			return time.Time{}, failure(err)
		}
		lost = stamp
	case lost == "":
		_ = s.rdb.SetNX(ctx, s.lostKey(), stamp, window).Err() // the first noticer's write wins
		lost = stamp
	}
	if notify != nil {
		notify(now)
	}
	return s.recordedLoss(lost, now, window), nil
}

// recordedLoss is the loss the lost key records, when it is within the
// window before now; it is remembered for Warnings.
func (s *Store) recordedLoss(lost string, now time.Time, window time.Duration) time.Time {
	ms, err := strconv.ParseInt(lost, 10, 64)
	if err != nil {
		return time.Time{}
	}
	at := time.UnixMilli(ms).UTC()
	s.mu.Lock()
	if at.After(s.lostAt) {
		s.lostAt = at
	}
	s.mu.Unlock()
	if !now.Before(at.Add(window)) {
		return time.Time{}
	}
	return at
}
