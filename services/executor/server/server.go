// Package server is what the zen binary wires to run the executor role: its
// configuration and its gRPC registration.
package server

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/executor/internal/clink"
	"github.com/zenmcp/zen/services/executor/internal/grpcapi"
	"github.com/zenmcp/zen/services/executor/internal/tools"
	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/secrets"
	"google.golang.org/grpc"
)

// ServiceName is the gRPC service this role serves, for health checks.
const ServiceName = "zen.executor.v1.ExecutorService"

// Config is the executor role's configuration.
type Config struct {
	Locale  string // LOCALE: the language every answer should be in
	Version string
	Commit  string
	// LastUpdated is the date of the commit the binary was built from.
	LastUpdated string
	// Disabled are the tools DISABLED_TOOLS turns off.
	Disabled []string
	// CLIConfigPath (CLI_CLIENTS_CONFIG_PATH) and CLIUserDir
	// (~/.zen/cli_clients) add to and override clink's built-in CLIs.
	CLIConfigPath, CLIUserDir string
	// ThinkdeepThinking is thinkdeep's default thinking mode
	// (DEFAULT_THINKING_MODE_THINKDEEP, default high).
	ThinkdeepThinking string
	// Secrets, set by the binary, are scrubbed from every result.
	Secrets *secrets.Scrubber
}

// Load reads the configuration.
func Load(getenv config.Getenv) (Config, error) {
	c := Config{Locale: config.String(getenv, "LOCALE", ""), Disabled: config.List(getenv, "DISABLED_TOOLS"),
		CLIConfigPath: config.String(getenv, "CLI_CLIENTS_CONFIG_PATH", "")}
	if home := getenv("HOME"); home != "" {
		c.CLIUserDir = filepath.Join(home, ".zen", "cli_clients")
	}
	c.ThinkdeepThinking = strings.ToLower(config.String(getenv, "DEFAULT_THINKING_MODE_THINKDEEP", "high"))
	if !slices.Contains([]string{"minimal", "low", "medium", "high", "max"}, c.ThinkdeepThinking) {
		return c, fmt.Errorf("DEFAULT_THINKING_MODE_THINKDEEP=%q: want minimal, low, medium, high or max", c.ThinkdeepThinking)
	}
	return c, nil
}

// Server is the executor role.
type Server struct{ api *grpcapi.Server }

// New builds the role; router is its connection to the router role.
func New(c Config, router grpc.ClientConnInterface, logger *slog.Logger) (*Server, error) {
	clis, err := clink.Load(c.CLIConfigPath, c.CLIUserDir)
	if err != nil {
		return nil, fmt.Errorf("executor: %w (CLI_CLIENTS_CONFIG_PATH)", err)
	}
	env := &tools.Env{
		Router:            routerv1.NewRouterServiceClient(router),
		Locale:            c.Locale,
		Version:           c.Version,
		Commit:            c.Commit,
		LastUpdated:       c.LastUpdated,
		CLIs:              clis,
		Secrets:           c.Secrets,
		Disabled:          tools.Disable(c.Disabled, logger),
		ThinkdeepThinking: c.ThinkdeepThinking,
	}
	return &Server{api: grpcapi.New(env, c.Secrets, logger)}, nil
}

// Register adds the executor service to a gRPC server.
func (s *Server) Register(r grpc.ServiceRegistrar) {
	executorv1.RegisterExecutorServiceServer(r, s.api)
}
