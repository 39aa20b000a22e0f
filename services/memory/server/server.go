// Package server is what the zen binary wires to run the memory role: its
// configuration and its gRPC registration.
package server

import (
	"fmt"
	"log/slog"
	"strings"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/memory/internal/grpcapi"
	"github.com/zenmcp/zen/services/memory/internal/memory"
	"github.com/zenmcp/zen/services/memory/internal/memory/memstore"
	"github.com/zenmcp/zen/services/platform/config"
	"google.golang.org/grpc"
)

// ServiceName is the gRPC service this role serves, for health checks.
const ServiceName = "zen.memory.v1.MemoryService"

// Config is the memory role's configuration.
type Config struct {
	TTL      time.Duration // CONVERSATION_TIMEOUT_HOURS, default 3h, fractions allowed
	MaxTurns int           // MAX_CONVERSATION_TURNS, default 50
	Store    string        // ZEN_MEMORY_STORE: memory
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
	c.Store = strings.ToLower(config.String(getenv, "ZEN_MEMORY_STORE", "memory"))
	if c.Store != "memory" {
		return c, fmt.Errorf("ZEN_MEMORY_STORE=%q: this build keeps threads in memory only; set ZEN_MEMORY_STORE=memory or leave it unset", c.Store)
	}
	return c, nil
}

// Server is the memory role.
type Server struct {
	api   *grpcapi.Server
	store memory.Store
}

// New builds the role from its configuration.
func New(c Config, logger *slog.Logger) (*Server, error) {
	store := memstore.New()
	svc := memory.NewService(store, c.TTL, c.MaxTurns)
	return &Server{api: grpcapi.New(svc, logger), store: store}, nil
}

// Register adds the memory service to a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) { memoryv1.RegisterMemoryServiceServer(r, s.api) }

// Close releases the store.
func (s *Server) Close() error { return s.store.Close() }
