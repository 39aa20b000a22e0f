package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// nodeSettings asks one node with CONFIG GET, and when that is refused
// (managed Redis services often rename or forbid CONFIG), with INFO.
func nodeSettings(ctx context.Context, c redis.Cmdable) (Persistence, Eviction, error) {
	pipe := c.Pipeline()
	aof, save := pipe.ConfigGet(ctx, "appendonly"), pipe.ConfigGet(ctx, "save")
	maxmemory, policy := pipe.ConfigGet(ctx, "maxmemory"), pipe.ConfigGet(ctx, "maxmemory-policy")
	_, err := pipe.Exec(ctx)
	if err == nil {
		a, sv := aof.Val()["appendonly"], save.Val()["save"]
		return Persistence{Known: true, Durable: a == "yes" || strings.TrimSpace(sv) != "",
				Detail: fmt.Sprintf("appendonly=%s save=%q", a, sv)},
			eviction(maxmemory.Val()["maxmemory"], policy.Val()["maxmemory-policy"], ""), nil
	}
	if !refused(err) {
		return Persistence{}, Eviction{}, failure(err)
	}
	// INFO takes one section at a time before Redis 7.
	pipe = c.Pipeline()
	persistence, mem := pipe.Info(ctx, "persistence"), pipe.Info(ctx, "memory")
	if _, err := pipe.Exec(ctx); err != nil && !refused(err) {
		return Persistence{}, Eviction{}, failure(err)
	}
	p := Persistence{Detail: "CONFIG GET refused, and INFO shows no append-only file"}
	if strings.Contains(persistence.Val(), "aof_enabled:1") {
		p = Persistence{Known: true, Durable: true, Detail: "aof_enabled:1 (CONFIG GET refused)"}
	}
	e := Eviction{Detail: "CONFIG GET and INFO memory refused"}
	if mem.Err() == nil {
		fields := infoFields(mem.Val())
		e = eviction(fields["maxmemory"], fields["maxmemory_policy"], " (CONFIG GET refused)")
	}
	return p, e, nil
}

// eviction is what a node's maxmemory and maxmemory-policy say; note
// follows the detail.
func eviction(maxmemory, policy, note string) Eviction {
	return Eviction{Known: maxmemory != "" && policy != "",
		Evicts: maxmemory != "" && maxmemory != "0" && policy != "" && policy != "noeviction",
		Detail: fmt.Sprintf("maxmemory=%s maxmemory-policy=%s%s", maxmemory, policy, note)}
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
