package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Memory reads what Redis keeps on disk (Persistence) and whether it
// evicts keys when full (Eviction) at start and at every health check:
// both decide what a Redis restart, or a full Redis, does to threads.

// settings reads every master's persistence and eviction settings.
func (s *Store) settings(ctx context.Context) (Persistence, Eviction, error) {
	cluster, ok := s.rdb.(*redis.ClusterClient)
	if !ok {
		return nodeSettings(ctx, s.rdb)
	}
	var mu sync.Mutex
	all, evict := Persistence{Known: true, Durable: true}, Eviction{Known: true}
	var details, evictDetails []string
	err := cluster.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
		p, e, err := nodeSettings(ctx, node)
		mu.Lock()
		defer mu.Unlock()
		all.Known, all.Durable = all.Known && p.Known, all.Durable && p.Durable
		evict.Known, evict.Evicts = evict.Known && e.Known, evict.Evicts || e.Evicts
		details = append(details, node.Options().Addr+": "+p.Detail)
		evictDetails = append(evictDetails, node.Options().Addr+": "+e.Detail)
		return err
	})
	// In the masters' order, not the order they answered in: a detail that
	// changes is logged again (redisWatch).
	slices.Sort(details)
	slices.Sort(evictDetails)
	all.Detail, evict.Detail = strings.Join(details, "; "), strings.Join(evictDetails, "; ")
	return all, evict, err
}

// nodeSettings asks one node: its persistence with CONFIG GET, and when
// that is refused (managed Redis services often rename or forbid CONFIG)
// with INFO persistence; its memory limit with INFO memory.
func nodeSettings(ctx context.Context, c redis.Cmdable) (Persistence, Eviction, error) {
	pipe := c.Pipeline()
	aof, save := pipe.ConfigGet(ctx, "appendonly"), pipe.ConfigGet(ctx, "save")
	mem := pipe.Info(ctx, "memory")
	_, _ = pipe.Exec(ctx) // each command answers for itself
	e := Eviction{Detail: "INFO memory refused"}
	switch err := mem.Err(); {
	case err == nil:
		e = eviction(infoFields(mem.Val()))
	case !refused(err):
		return Persistence{}, Eviction{}, failure(err)
	}
	switch err := errors.Join(aof.Err(), save.Err()); {
	case err == nil:
		a, sv := aof.Val()["appendonly"], save.Val()["save"]
		return Persistence{Known: true, Durable: a == "yes" || strings.TrimSpace(sv) != "",
			Detail: fmt.Sprintf("appendonly=%s save=%q", a, sv)}, e, nil
	case !refused(err):
		return Persistence{}, Eviction{}, failure(err)
	}
	info, err := c.Info(ctx, "persistence").Result()
	switch {
	case err != nil && !refused(err):
		return Persistence{}, Eviction{}, failure(err)
	case strings.Contains(info, "aof_enabled:1"):
		return Persistence{Known: true, Durable: true, Detail: "aof_enabled:1 (CONFIG GET refused)"}, e, nil
	}
	return Persistence{Detail: "CONFIG GET refused, and INFO shows no append-only file"}, e, nil
}

// eviction is what a node's INFO memory says of its limit; a server that
// leaves either field out (a Redis look-alike) has not said.
func eviction(fields map[string]string) Eviction {
	limit, err := strconv.ParseInt(fields["maxmemory"], 10, 64)
	policy := fields["maxmemory_policy"]
	detail := fmt.Sprintf("maxmemory=%s maxmemory-policy=%s", fields["maxmemory"], policy)
	if err != nil || policy == "" {
		return Eviction{Detail: detail}
	}
	return Eviction{Known: true, Evicts: limit > 0 && policy != "noeviction", Detail: detail}
}

// infoFields are the name:value lines of an INFO reply.
func infoFields(info string) map[string]string {
	fields := make(map[string]string)
	for line := range strings.Lines(info) {
		if name, value, ok := strings.Cut(strings.TrimSpace(line), ":"); ok {
			fields[name] = value
		}
	}
	return fields
}

// refused tells an error Redis answered with from one reaching it.
func refused(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !errors.Is(err, redis.Nil)
}
