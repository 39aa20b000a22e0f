// Package server is what the zen binary wires to run the memory role: its
// configuration and its gRPC registration.
package server

import (
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
	"github.com/zenmcp/zen/services/memory/internal/memory/sqlitestore"
	"github.com/zenmcp/zen/services/platform/config"
	"google.golang.org/grpc"
)

// ServiceName is the gRPC service this role serves, for health checks.
const ServiceName = "zen.memory.v1.MemoryService"

// Config is the memory role's configuration.
type Config struct {
	TTL      time.Duration // CONVERSATION_TIMEOUT_HOURS, default 3h, fractions allowed
	MaxTurns int           // MAX_CONVERSATION_TURNS, default 50
	Store    string        // ZEN_MEMORY_STORE: sqlite (default) or memory
	DataDir  string        // ZEN_DATA_DIR, else $XDG_STATE_HOME/zen, else ~/.local/state/zen
}

// DBPath is where the sqlite store keeps its file.
func (c Config) DBPath() string { return filepath.Join(c.DataDir, "memory.db") }

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
	c.Store = strings.ToLower(config.String(getenv, "ZEN_MEMORY_STORE", "sqlite"))
	switch c.Store {
	case "memory":
	case "sqlite":
		dir, err := dataDir(getenv)
		if err != nil {
			return c, err
		}
		c.DataDir = dir
	default:
		return c, fmt.Errorf("ZEN_MEMORY_STORE=%q: want sqlite (the default, a file that survives restarts) or memory (lost on exit)", c.Store)
	}
	return c, nil
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
	api   *grpcapi.Server
	store memory.Store
}

// New builds the role from its configuration.
func New(c Config, logger *slog.Logger) (*Server, error) {
	var store memory.Store = memstore.New()
	if c.Store == "sqlite" {
		s, err := sqlitestore.Open(c.DBPath())
		if err != nil {
			return nil, fmt.Errorf("ZEN_DATA_DIR: %w", err)
		}
		store = s
		logger.Info("memory store", "store", "sqlite", "path", c.DBPath())
	}
	svc := memory.NewService(store, c.TTL, c.MaxTurns)
	return &Server{api: grpcapi.New(svc, logger), store: store}, nil
}

// Register adds the memory service to a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) { memoryv1.RegisterMemoryServiceServer(r, s.api) }

// Close releases the store.
func (s *Server) Close() error { return s.store.Close() }
