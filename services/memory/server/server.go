// Package server is what the zen binary wires to run the memory role: its
// configuration and its gRPC registration.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/grpcapi"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/memory/internal/memory/redisstore"
	"github.com/zenmcp/zen/services/memory/internal/memory/sqlitestore"
	"github.com/zenmcp/zen/services/platform/config"
	"google.golang.org/grpc"
)

// clientStoreMB names the bound of one client's threads.
const clientStoreMB = "ZEN_CLIENT_STORE_MB"

// ServiceName is the gRPC service this role serves, for health checks.
const ServiceName = "zen.memory.v1.MemoryService"

// Config is the memory role's configuration.
type Config struct {
	TTL      time.Duration // CONVERSATION_TIMEOUT_HOURS, default 3h, fractions allowed
	MaxTurns int           // MAX_CONVERSATION_TURNS, default 50
	Store    string        // ZEN_MEMORY_STORE: sqlite (default), redis (default when REDIS_URL is set) or memory
	DataDir  string        // ZEN_DATA_DIR, else $XDG_STATE_HOME/zen, else ~/.local/state/zen
	RedisURL string        // REDIS_URL
	Compress bool          // ZEN_MEMORY_COMPRESS: gzip large turns in Redis
	Prefix   string        // ZEN_REDIS_PREFIX, default "zen:"
	// RequireDurable is ZEN_REQUIRE_DURABLE_REDIS: a Redis that keeps
	// nothing on disk is a startup error, not a warning.
	RequireDurable bool
	// ClientStoreMB is ZEN_CLIENT_STORE_MB: what one client's live threads
	// may weigh together, in MiB, so that no client fills the store the
	// others share; 0 for no bound.
	ClientStoreMB int
}

// defaultClientStoreMB is a client's room unless ZEN_CLIENT_STORE_MB says:
// 32 threads at the most one may hold, and more than a busy agent's three
// hours of conversations (50 turns of 60 KB prompts and 250 KB answers
// weigh 8 MB a thread).
const defaultClientStoreMB = 1024

// DBPath is where the sqlite store keeps its file.
func (c Config) DBPath() string { return filepath.Join(c.DataDir, "memory.db") }

// StoreFiles are the files the sqlite store keeps in dir: its database and
// the WAL and shared-memory files beside it, which hold every client's
// threads as the database does.
func StoreFiles(dir string) []string {
	db := Config{DataDir: dir}.DBPath()
	return []string{db, db + "-wal", db + "-shm"}
}

// Load reads the configuration; errors name the bad variable.
func Load(getenv config.Getenv) (Config, error) {
	var c Config
	var err error
	if c.TTL, err = config.Hours(getenv, "CONVERSATION_TIMEOUT_HOURS", 3*time.Hour); err != nil {
		return c, err
	}
	if c.MaxTurns, err = config.Int(getenv, "MAX_CONVERSATION_TURNS", 50, 2, 10_000); err != nil {
		return c, err
	}
	if c.ClientStoreMB, err = config.Int(getenv, clientStoreMB, defaultClientStoreMB, 0, 1<<30); err != nil {
		return c, err
	}
	if most := int(memory.MaxThreadWeight >> 20); c.ClientStoreMB > 0 && c.ClientStoreMB < most {
		return c, fmt.Errorf("%s=%d: want 0 (no bound) or at least %d, the MiB one thread may hold", clientStoreMB,
			c.ClientStoreMB, most)
	}
	c.RedisURL = config.String(getenv, "REDIS_URL", "")
	def := "sqlite"
	if c.RedisURL != "" {
		def = "redis"
	}
	c.Store = strings.ToLower(config.String(getenv, "ZEN_MEMORY_STORE", def))
	switch c.Store {
	case "memory":
	case "redis":
		if c.RedisURL == "" {
			return c, errors.New("ZEN_MEMORY_STORE=redis needs REDIS_URL, such as redis://127.0.0.1:6379/0")
		}
		if c.Compress, err = config.Bool(getenv, "ZEN_MEMORY_COMPRESS", false); err != nil {
			return c, err
		}
		c.Prefix = config.String(getenv, "ZEN_REDIS_PREFIX", "zen:")
		if c.RequireDurable, err = config.Bool(getenv, requireDurable, false); err != nil {
			return c, err
		}
	case "sqlite":
		dir, err := dataDir(getenv)
		if err != nil {
			return c, err
		}
		c.DataDir = dir
	default:
		return c, fmt.Errorf("ZEN_MEMORY_STORE=%q: want sqlite (a file that survives restarts), redis (shared by a cluster) or memory (lost on exit)", c.Store)
	}
	return c, nil
}

// DataDir is where the sqlite store keeps its threads under getenv's
// variables, or "" when no directory can be named, so that the edge can
// keep clients' file arguments away from every client's threads.
func DataDir(getenv config.Getenv) string {
	d, _ := dataDir(getenv)
	return d
}

// dataDir follows the XDG base directory rules for state.
func dataDir(getenv config.Getenv) (string, error) {
	if d := getenv("ZEN_DATA_DIR"); d != "" {
		if !filepath.IsAbs(d) {
			return "", fmt.Errorf("ZEN_DATA_DIR=%q: want an absolute directory", d)
		}
		return d, nil
	}
	if d := getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "zen"), nil
	}
	if home := getenv("HOME"); home != "" {
		return filepath.Join(home, ".local", "state", "zen"), nil
	}
	return "", errors.New("ZEN_DATA_DIR: no home directory to keep threads in; set ZEN_DATA_DIR, or ZEN_MEMORY_STORE=memory")
}

// Server is the memory role.
type Server struct {
	api    *grpcapi.Server
	store  memory.Store
	logger *slog.Logger
	// redis, when the store is Redis, is watched for its persistence and
	// for a restart that lost its data (see watch.go).
	redis *redisWatch
}

// New builds the role from its configuration.
func New(c Config, logger *slog.Logger) (*Server, error) {
	var store memory.Store = memstore.New()
	var watch *redisWatch
	switch c.Store {
	case "sqlite":
		s, err := sqlitestore.Open(c.DBPath())
		if err != nil {
			return nil, fmt.Errorf("ZEN_DATA_DIR: %w", err)
		}
		store = s
		logger.Info("memory store", "store", "sqlite", "path", c.DBPath())
	case "redis":
		redisstore.RouteLogs(logger)
		s, err := redisstore.Open(c.RedisURL, c.Prefix, c.Compress)
		if err != nil {
			return nil, err
		}
		s.LogTo(logger)
		store = s
		watch = newRedisWatch(s, c, logger)
		// Redis may come up after zen: start anyway, report NOT_SERVING
		// until it answers (see Watch), and recover by itself.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = s.Ping(ctx)
		if err == nil {
			err = watch.check(ctx)
		}
		cancel()
		var risky *notDurableError
		switch {
		case errors.As(err, &risky):
			s.Close()
			return nil, err
		case err != nil:
			logger.Warn("redis is not answering yet; memory calls fail until it does", "err", err)
		}
		logger.Info("memory store", "store", "redis", "compress", c.Compress, "prefix", c.Prefix,
			"require_durable", c.RequireDurable)
	}
	svc := memory.NewService(store, c.TTL, c.MaxTurns)
	svc.LimitClients(int64(c.ClientStoreMB) << 20)
	return &Server{api: grpcapi.New(svc, logger), store: store, logger: logger, redis: watch}, nil
}

// Register adds the memory service to a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) { memoryv1.RegisterMemoryServiceServer(r, s.api) }

// Close releases the store.
func (s *Server) Close() error { return s.store.Close() }
