// Package server is what the zen binary wires to run the edge role: MCP
// over streamable HTTP or stdio in front of memory, router and executor.
package server

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/call"
	"github.com/zenmcp/zen/services/edge/internal/fastcall"
	"github.com/zenmcp/zen/services/edge/internal/mcpserver"
	"github.com/zenmcp/zen/services/edge/internal/streamhttp"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/cores"
	"github.com/zenmcp/zen/services/platform/hostguard"
	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/modelrule"
	"github.com/zenmcp/zen/services/platform/secrets"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// StartupTimeout bounds how long the edge waits for the executor's tool
// list and the router's model list before it gives up starting.
const StartupTimeout = 30 * time.Second

// Config is the edge role's configuration.
type Config struct {
	Version string
	// ProgressInterval is the longest gap between progress notifications
	// while a call runs (ZEN_PROGRESS_INTERVAL, default 5s).
	ProgressInterval time.Duration
	// Home is the user's home directory (HOME), whose root is never read.
	Home string
	// Files configures which paths clients may name (ZEN_FILE_ROOTS) and
	// what is never read or written.
	Files FileConfig
	// MaxOutputTokens is the client's budget for one result
	// (MAX_MCP_OUTPUT_TOKENS, default 25,000); the prompt limit derives
	// from it too.
	MaxOutputTokens int
	// Tokens, when set, are the bearer tokens MCP over HTTP requires
	// (ZEN_AUTH_TOKEN, ZEN_AUTH_TOKENS_FILE).
	Tokens auth.Tokens
	// AllowedHosts are the Host names MCP over HTTP answers to besides
	// loopback ones (ZEN_ALLOWED_HOSTS).
	AllowedHosts hostguard.Hosts
	// Secrets, set by the binary, are scrubbed from every reply.
	Secrets *secrets.Scrubber
	// Cores, when the binary sets it, hears of every call.
	Cores *cores.Governor
}

// Load reads the configuration; errors name the bad variable.
func Load(getenv config.Getenv) (Config, error) {
	c := Config{Home: getenv("HOME")}
	var err error
	if c.ProgressInterval, err = config.Duration(getenv, "ZEN_PROGRESS_INTERVAL", 5*time.Second, 100*time.Millisecond, time.Minute); err != nil {
		return c, err
	}
	if c.MaxOutputTokens, err = config.Int(getenv, "MAX_MCP_OUTPUT_TOKENS", call.DefaultOutputTokens, 1000, 10_000_000); err != nil {
		return c, err
	}
	if c.AllowedHosts, err = hostguard.Load(getenv); err != nil {
		return c, err
	}
	if c.Files.Roots, err = loadFileRoots(getenv); err != nil {
		return c, err
	}
	if c.Files.AgentCLIs, err = config.Bool(getenv, "ZEN_CLINK_ON_SHARED", false); err != nil {
		return c, err
	}
	c.Tokens, err = auth.Load(getenv)
	return c, err
}

// Conns are the edge's connections to the other roles.
type Conns struct {
	Memory, Router, Executor grpc.ClientConnInterface
}

// Server is the edge role.
type Server struct {
	mcp       *mcpserver.Server
	tokens    auth.Tokens
	hosts     hostguard.Hosts
	logger    *slog.Logger
	keepAlive time.Duration
	// sendTime bounds how long a piece of an answer waits for its client
	// to take it (serve.Paced).
	sendTime time.Duration
	// memoryHealth is what calls consult before storing; readiness
	// reports the same signal.
	memoryHealth *call.HealthWatch
	// memory is asked, at each readiness probe, what puts threads at risk.
	memory memoryv1.MemoryServiceClient
	// sdkOnly leaves every request to the SDK, fastcall's common calls
	// too, and sdkSeen, when set, wraps the SDK's handler: for the tests
	// that hold the two to the same answers, and fastcall to the calls it
	// must answer.
	sdkOnly bool
	sdkSeen func(http.Handler) http.Handler
}

// Ready fails while calls would be refused for memory's sake.
func (s *Server) Ready() error {
	if s.memoryHealth.Down() {
		return &serve.NotReadyError{Role: "memory", Reason: "cannot store conversations right now"}
	}
	return nil
}

// Readiness answers GET /readyz: ready when deps answer and memory can
// store, with memory's warnings (a Redis without persistence, or one that
// lost its data); addresses only for a caller with one of the edge's
// tokens.
func (s *Server) Readiness(deps []serve.Dependency) http.Handler {
	return serve.ReadyHandler(s.tokens, func(ctx context.Context) error {
		if err := serve.CheckAll(ctx, deps); err != nil {
			return err
		}
		if err := s.Ready(); err != nil {
			return err
		}
		settings, err := s.memory.GetSettings(ctx, &memoryv1.GetSettingsRequest{})
		if err != nil {
			return nil // memory's health says it serves; a failed question is no warning
		}
		return serve.Warn("memory", settings.GetWarnings())
	})
}

// New fetches the tool catalogue and builds the MCP server. ctx is the
// edge's lifetime, not just its start.
func New(ctx context.Context, cfg Config, conns Conns, logger *slog.Logger) (*Server, error) {
	life := ctx // the edge's lifetime: the memory health watch runs as long
	ctx, cancel := context.WithTimeout(ctx, StartupTimeout)
	defer cancel()
	router := routerv1.NewRouterServiceClient(conns.Router)
	executor := executorv1.NewExecutorServiceClient(conns.Executor)
	list, err := executor.ListTools(ctx, &executorv1.ListToolsRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return nil, fmt.Errorf("edge: list tools from the executor: %w", err)
	}
	models, err := router.ListModels(ctx, &routerv1.ListModelsRequest{}, grpc.WaitForReady(true))
	if err != nil {
		return nil, fmt.Errorf("edge: list models from the router: %w", err)
	}
	var tools []*call.Tool
	for _, t := range list.GetTools() {
		ct, err := call.NewTool(t)
		if err != nil {
			return nil, fmt.Errorf("edge: %w", err)
		}
		tools = append(tools, ct)
	}
	policy := cfg.Files.policy(cfg.Home)
	memory := memoryv1.NewMemoryServiceClient(conns.Memory)
	backends := call.Backends{Memory: memory, Router: router, Executor: executor,
		MemoryHealth: call.WatchHealth(life, healthpb.NewHealthClient(conns.Memory), call.MemoryService)}
	runner := call.NewRunner(backends, tools, policy, cfg.MaxOutputTokens, logger)
	runner.Secrets = cfg.Secrets
	mode := modelrule.Mode{Auto: models.GetAutoMode(), Default: models.GetDefaultModel()}
	s := mcpserver.New(tools, runner, mcpserver.Options{
		Name:             "zen",
		Version:          cfg.Version,
		Instructions:     mcpserver.Instructions(mode, models.GetSetupHelp() != ""),
		Models:           mode,
		Logger:           logger,
		ProgressInterval: cfg.ProgressInterval,
		Memory:           memory,
		Cores:            cfg.Cores,
	})
	return &Server{mcp: s, tokens: cfg.Tokens, hosts: cfg.AllowedHosts, logger: logger, keepAlive: cfg.ProgressInterval,
		sendTime:     serve.SendTime,
		memoryHealth: backends.MemoryHealth, memory: memory}, nil
}

// Handler serves MCP over streamable HTTP. Sessions are stateless, so any
// edge replica can answer any request. Response streams get a keep-alive
// comment whenever the progress interval passes in silence, and a call ends
// when its client leaves or cancels it, in either protocol era; a 2025-era
// client's cancellation reaches only the calls of its own session (an id
// minted on initialize, bound to the token's client). Requests
// from browsers on other origins, and requests naming a Host that is neither
// loopback nor allowed (DNS rebinding), are refused on every listener; with
// tokens configured a request needs one.
func (s *Server) Handler() http.Handler {
	// fastcall answers as the SDK's handler does with these options; it
	// must learn of any change to them.
	var h http.Handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp.Server },
		&mcp.StreamableHTTPOptions{
			Stateless:                    true,
			Logger:                       telemetry.Demoted(s.logger),
			PropagateRequestCancellation: true, // see mcpserver.New
			// hostguard checks Host on every listener; the SDK's check
			// covers loopback connections only and would refuse allowed
			// names there.
			DisableLocalhostProtection: true,
			MaxRequestBodyBytes:        streamhttp.MaxBody,
		})
	if s.sdkSeen != nil {
		h = s.sdkSeen(h)
	}
	if !s.sdkOnly {
		h = fastcall.New(h, s.mcp)
	}
	h = streamhttp.NewCalls().Wrap(streamhttp.KeepAlive(s.keepAlive, h))
	// Bodies are limited before anything reads them, and the refusal is a
	// JSON-RPC error the client can show, not the SDK's plain-text 413.
	h = streamhttp.LimitBody(streamhttp.MaxBody, refuseTooLarge, h)
	if s.tokens.On() {
		h = mcpauth.RequireBearerToken(s.tokens.Verifier(), nil)(h)
	}
	// The SDK and mcpauth refuse some requests in plain text (a missing
	// Accept, no token); those answer in zen's one error shape. JSON-RPC
	// refusals (too large, above) keep JSON-RPC's own, which clients match
	// to their call.
	// A body's time to arrive is serve.HTTP's, outside all of this, so
	// that a refused request's body is not waited for either.
	h = s.hosts.Protect(httperr.ReplacePlainText(h))
	// Each piece of an answer has its time to go out: a result, a thread
	// resource or a stream that its client stops reading ends then, with
	// what it held.
	h = serve.Paced(s.sendTime, h)
	return otelhttp.NewHandler(h, "mcp")
}

// refuseTooLarge answers a request whose body is over streamhttp.MaxBody.
func refuseTooLarge(w http.ResponseWriter, head []byte, size int64) {
	mcpserver.WriteRefusal(w, http.StatusRequestEntityTooLarge, head, mcpserver.TooLarge(size, streamhttp.MaxBody))
}
