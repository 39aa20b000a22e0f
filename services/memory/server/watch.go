package server

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory/redisstore"
	"github.com/zenmcp/zen/services/memory/internal/memory/sqlitestore"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"go.opentelemetry.io/otel/metric"
)

// requireDurable names the variable that refuses a Redis without
// persistence.
const requireDurable = "ZEN_REQUIRE_DURABLE_REDIS"

// notDurableError is a Redis that keeps nothing on disk while
// ZEN_REQUIRE_DURABLE_REDIS is set: memory refuses to keep threads there.
type notDurableError struct{ p redisstore.Persistence }

func (e *notDurableError) Error() string {
	what := "keeps nothing on disk"
	if !e.p.Known {
		what = "does not show whether it keeps anything on disk"
	}
	return requireDurable + "=true, but Redis " + what + " (" + e.p.Detail + "): run Redis with appendonly yes " +
		"(or RDB snapshots, save), or unset " + requireDurable + " to run with a warning instead"
}

// redisWatch follows what puts a Redis store's threads at risk: its
// persistence and eviction settings, read at start and at every health check (so a
// Redis that reconnects with other settings is noticed), and a restart
// that lost its data.
type redisWatch struct {
	store   *redisstore.Store
	require bool
	logger  *slog.Logger
	// What was last logged of each: a change is logged again.
	lastPersistence *redisstore.Persistence
	lastEviction    *redisstore.Eviction
	lastMigrateErr  string
}

func newRedisWatch(s *redisstore.Store, c Config, logger *slog.Logger) *redisWatch {
	w := &redisWatch{store: s, require: c.RequireDurable, logger: logger}
	// A fixed name and options: an error would cost only the metric.
	losses, _ := telemetry.Meter().Int64Counter("zen.memory.redis.data_losses",
		metric.WithDescription("times memory found that Redis had lost its data (its marker key gone)"))
	// Threads older than a conversation's lifetime would have expired
	// anyway, so a loss is reported to clients for that long.
	s.OnDataLoss(c.TTL, func(at time.Time) {
		logger.Error("redis lost its data", "at", at, "effect", "threads written before then are gone; "+
			"clients continuing one are told the store lost it", "fix", "run Redis with appendonly yes")
		losses.Add(context.Background(), 1)
	})
	return w
}

// check runs the store's check and logs what changed. It fails with a
// *notDurableError when durability is required and missing.
func (w *redisWatch) check(ctx context.Context) error {
	h, err := w.store.Check(ctx, time.Now())
	if err != nil {
		return err
	}
	p := h.Persistence
	if w.lastPersistence == nil || *w.lastPersistence != p {
		w.lastPersistence = &p
		switch risk, fix := p.Risk(); {
		case risk == "":
			w.logger.Info("redis persistence", "detail", p.Detail)
		case w.require: // the caller reports the refusal
		default:
			w.logger.Warn("memory "+risk, "detail", p.Detail,
				"fix", fix+", or set "+requireDurable+"=true to refuse")
		}
	}
	if e := h.Eviction; w.lastEviction == nil || *w.lastEviction != e {
		w.lastEviction = &e
		if risk, fix := e.Risk(); risk != "" {
			w.logger.Warn("memory "+risk, "detail", e.Detail, "fix", fix)
		} else {
			w.logger.Info("redis eviction", "detail", e.Detail)
		}
	}
	if h.Migrated > 0 {
		w.logger.Info("threads moved into per-client indexes", "threads", h.Migrated)
	}
	switch {
	case h.MigrateErr == nil:
		w.lastMigrateErr = ""
	case h.MigrateErr.Error() != w.lastMigrateErr: // not again every check while Redis is full, say
		w.lastMigrateErr = h.MigrateErr.Error()
		w.logger.Warn("moving threads into per-client indexes stopped; the next check goes on",
			"err", h.MigrateErr)
	}
	if w.require && !p.Durable {
		return &notDurableError{p}
	}
	return nil
}

// pinger is a store that can tell whether its backend answers.
type pinger interface{ Ping(context.Context) error }

// watchEvery spaces store health checks; an unreachable store is checked
// more often, so calls resume soon after it returns.
const (
	watchEvery         = 2 * time.Second
	watchEveryWhenDown = 250 * time.Millisecond
)

// Watch reports the store's health through setServing until ctx ends:
// at once, then every time it changes. Stores with nothing to reach are
// always healthy. A Redis without persistence while one is required is
// unhealthy too: no write goes where a restart would lose it.
func (s *Server) Watch(ctx context.Context, setServing func(bool)) {
	p, ok := s.store.(pinger)
	if !ok {
		setServing(true)
		return
	}
	known, healthy := false, false
	for {
		pctx, cancel := context.WithTimeout(ctx, watchEvery)
		err := p.Ping(pctx)
		if err == nil && s.redis != nil {
			err = s.redis.check(pctx)
		}
		cancel()
		if ok := err == nil; !known || ok != healthy {
			known, healthy = true, ok
			var refused *notDurableError
			var gone *sqlitestore.GoneError
			switch {
			case errors.As(err, &refused):
				s.logger.Error("memory refuses its store", "err", err)
			case errors.As(err, &gone):
				s.logger.Error("memory's database file is gone; calls fail until zen restarts", "err", err)
			case err != nil:
				s.logger.Warn("memory store unreachable", "err", err)
			default:
				s.logger.Info("memory store reachable")
			}
			setServing(ok) // once it is logged: whoever it tells may look for why
		}
		wait := watchEvery
		if !healthy {
			wait = watchEveryWhenDown
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}
