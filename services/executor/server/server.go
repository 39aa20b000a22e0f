// Package server is what the zen binary wires to run the executor role: its
// configuration and its gRPC registration.
package server

import (
	"log/slog"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/executor/internal/grpcapi"
	"github.com/zenmcp/zen/services/executor/internal/tools"
	"github.com/zenmcp/zen/services/platform/config"
	"google.golang.org/grpc"
)

// ServiceName is the gRPC service this role serves, for health checks.
const ServiceName = "zen.executor.v1.ExecutorService"

// Config is the executor role's configuration.
type Config struct {
	Locale  string // LOCALE: the language every answer should be in
	Version string
	Commit  string
}

// Load reads the configuration.
func Load(getenv config.Getenv) (Config, error) {
	return Config{Locale: config.String(getenv, "LOCALE", "")}, nil
}

// Server is the executor role.
type Server struct{ api *grpcapi.Server }

// New builds the role; router is its connection to the router role.
func New(c Config, router grpc.ClientConnInterface, logger *slog.Logger) *Server {
	env := &tools.Env{Router: routerv1.NewRouterServiceClient(router), Locale: c.Locale, Version: c.Version, Commit: c.Commit}
	return &Server{api: grpcapi.New(env, logger)}
}

// Register adds the executor service to a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	executorv1.RegisterExecutorServiceServer(r, s.api)
}
