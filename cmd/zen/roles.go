package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"

	edgeserver "github.com/zenmcp/zen/services/edge/server"
	executorserver "github.com/zenmcp/zen/services/executor/server"
	memoryserver "github.com/zenmcp/zen/services/memory/server"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/cores"
	"github.com/zenmcp/zen/services/platform/hostguard"
	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/serve"
	routerserver "github.com/zenmcp/zen/services/router/server"
	"google.golang.org/grpc"

	"github.com/zenmcp/zen/gateway"
)

// listen opens a listener before anything serves, so ":0" works and the
// log says where each listener ended up.
func listen(logger *slog.Logger, addr, what string) (net.Listener, error) {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for %s on %s: %w", what, addr, err)
	}
	attrs := []any{"listener", what, "addr", lis.Addr().String()}
	if path, ok := httpPaths[what]; ok {
		attrs = append(attrs, "url", "http://"+lis.Addr().String()+path)
	}
	logger.Info("listening", attrs...)
	return lis, nil
}

// httpPaths are where the HTTP listeners serve, so that the log line gives
// a URL to paste: an MCP client needs /mcp, not the bare address.
var httpPaths = map[string]string{"mcp": "/mcp", "gateway": "/", "metrics": "/metrics", "pprof": "/debug/pprof/"}

func buildMemory(s *settings, logger *slog.Logger) (*memoryserver.Server, error) {
	cfg, err := memoryserver.Load(s.getenv)
	if err != nil {
		return nil, err
	}
	return memoryserver.New(cfg, logger.With("service", "memory"))
}

// buildRouter builds the router for role (serve, stdio or router).
func buildRouter(s *settings, logger *slog.Logger, role string) (*routerserver.Server, error) {
	cfg, err := routerserver.Load(s.getenv)
	if err != nil {
		return nil, err
	}
	cfg.EnvFiles, cfg.ShowEnvFiles = s.envFiles, ownServer(s, role)
	if role == "router" && cfg.Policy.Deadline >= s.ageGrace {
		// A split router's model calls stream over connections that close
		// at their age once the grace is over, under any call still on
		// them (serve.MaxConnectionAgeGrace). In one process they do not.
		logger.Warn("model calls may outlast their connection's grace",
			"ZEN_PROVIDER_TIMEOUT", cfg.Policy.Deadline.String(),
			"ZEN_GRPC_MAX_CONNECTION_AGE_GRACE", s.ageGrace.String(),
			"help", "a call still running when its connection's grace ends is cut: "+
				"set ZEN_GRPC_MAX_CONNECTION_AGE_GRACE above ZEN_PROVIDER_TIMEOUT")
	}
	return routerserver.New(cfg, logger.With("service", "router"))
}

func buildExecutor(s *settings, router grpc.ClientConnInterface, logger *slog.Logger) (*executorserver.Server, error) {
	cfg, err := executorserver.Load(s.getenv)
	if err != nil {
		return nil, err
	}
	cfg.Version, cfg.Commit, cfg.LastUpdated = version, commit, lastUpdated()
	cfg.Secrets = s.secrets
	return executorserver.New(cfg, router, logger.With("service", "executor"))
}

// newEdge builds the edge role from its variables. overHTTP is whether it
// serves MCP over HTTP (serve, edge) rather than stdio.
func newEdge(ctx context.Context, s *settings, conns edgeserver.Conns, logger *slog.Logger,
	overHTTP bool) (*edgeserver.Server, error) {
	cfg, err := edgeserver.Load(s.getenv)
	if err != nil {
		return nil, err
	}
	fileSettings(&cfg.Files, s, overHTTP)
	cfg.Version = version
	cfg.Secrets = s.secrets
	cfg.Cores = governCores(ctx, s.getenv, logger)
	return edgeserver.New(ctx, cfg, conns, logger)
}

// governCores runs a process that answers MCP calls on one core while they
// come one at a time (cores.Governor), for as long as ctx lasts; nil, and
// nothing changed, when GOMAXPROCS is set (applyGOMAXPROCS), whose count
// then stands, or when the process has one core anyway.
func governCores(ctx context.Context, getenv config.Getenv, logger *slog.Logger) *cores.Governor {
	if gomaxprocsSet(getenv) || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	g := cores.New(logger)
	go g.Run(ctx)
	return g
}

// newGateway builds the gateway, with the same tokens and allowed hosts as
// the edge.
func newGateway(ctx context.Context, s *settings, conns gateway.Conns) (http.Handler, error) {
	tokens, err := auth.Load(s.getenv)
	if err != nil {
		return nil, err
	}
	hosts, err := hostguard.Load(s.getenv)
	if err != nil {
		return nil, err
	}
	trace, err := gateway.LoadTraceURL(s.getenv)
	if err != nil {
		return nil, err
	}
	return gateway.New(ctx, conns, gateway.Settings{Tokens: tokens, Hosts: hosts, Version: version, Trace: trace,
		Secrets: s.secrets})
}

// edgeMux serves MCP at /mcp beside liveness and readiness probes.
func edgeMux(edge *edgeserver.Server, deps []serve.Dependency) http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/mcp", edge.Handler())
	mux.HandleFunc("GET /healthz", serve.Live)
	mux.Handle("GET /readyz", edge.Readiness(deps))
	mux.Handle("/", httperr.NotFound("MCP is at /mcp")) // not the mux's plain-text 404
	return mux
}

func dial(s *settings, addr, env string) (*grpc.ClientConn, error) {
	conn, err := serve.Dial(addr, s.security.DialOptions()...)
	if err != nil {
		return nil, fmt.Errorf("%s=%q: %w", env, addr, err)
	}
	return conn, nil
}

// runServe runs every role in one process. The roles reach each other
// in-process (serve.Local: no socket, no HTTP/2, the same checks, traces
// and metrics as a cluster's calls); the gRPC port is for other processes
// (split roles, grpcurl).
func runServe(ctx context.Context, s *settings, logger *slog.Logger) error {
	mem, err := buildMemory(s, logger)
	if err != nil {
		return err
	}
	defer mem.Close()
	rt, err := buildRouter(s, logger, "serve")
	if err != nil {
		return err
	}
	grpcLis, err := listen(logger, s.grpcAddr, "grpc")
	if err != nil {
		return err
	}
	g := serve.NewGRPC(s.security.ServerOptions()...)
	self := g.Local(s.security)
	ex, err := buildExecutor(s, self, logger)
	if err != nil {
		return err
	}
	mem.Register(g)
	rt.Register(g)
	ex.Register(g)
	g.SetServing(routerserver.ServiceName, executorserver.ServiceName)
	holdRouter(g, rt)
	g.SetStatus(false, memoryserver.ServiceName) // until its store first answers

	// The edge and the gateway stop first; the services they call stop only
	// once the calls in flight have finished and been saved (stages).
	st := newStages(ctx, logger)
	defer st.Stop() // ends what started when starting fails
	st.Back(func(ctx context.Context) error {
		mem.Watch(ctx, func(ok bool) { g.SetStatus(ok, memoryserver.ServiceName) })
		return nil
	})
	st.Back(func(ctx context.Context) error { return g.Serve(ctx, grpcLis) })
	front := st.FrontContext()
	edge, err := newEdge(front, s, edgeserver.Conns{Memory: self, Router: self, Executor: self}, logger, true)
	if err != nil {
		return err
	}
	gw, err := newGateway(front, s, gateway.Conns{Memory: self, Router: self, Executor: self})
	if err != nil {
		return err
	}
	deps := []serve.Dependency{{Name: "memory", Conn: self}, {Name: "router", Conn: self}, {Name: "executor", Conn: self}}
	if err := serveHTTP(st, logger, s.mcpAddr, "mcp", edgeMux(edge, deps)); err != nil {
		return err
	}
	if err := serveHTTP(st, logger, s.httpAddr, "gateway", gw, serve.LittleUnsent); err != nil {
		return err
	}
	return st.Wait()
}

// serveHTTP serves h in the front of st, on a listener made what wrap
// (each, in turn) makes it.
func serveHTTP(st *stages, logger *slog.Logger, addr, what string, h http.Handler,
	wrap ...func(net.Listener) net.Listener) error {
	lis, err := listen(logger, addr, what)
	if err != nil {
		return err
	}
	for _, w := range wrap {
		lis = w(lis)
	}
	st.Front(func(ctx context.Context) error { return serve.HTTP(ctx, lis, h) })
	return nil
}

// runGRPCRole serves one gRPC role until ctx ends. watch, when set,
// reports the role's health as it changes; notReady, when set, says why
// the role cannot work until its configuration changes, and holds it not
// ready (serve.GRPC.SetNotReady); otherwise the role serves as soon as it
// is registered.
func runGRPCRole(ctx context.Context, s *settings, logger *slog.Logger, name string, register func(grpc.ServiceRegistrar),
	watch func(context.Context, func(bool)), notReady string) error {
	lis, err := listen(logger, s.grpcAddr, "grpc")
	if err != nil {
		return err
	}
	g := serve.NewGRPC(s.security.ServerOptions()...)
	register(g)
	if notReady != "" {
		g.SetNotReady(name, notReady)
	} else if watch == nil {
		g.SetServing(name)
	} else {
		g.SetStatus(false, name) // until the first check says otherwise
		go watch(ctx, func(ok bool) { g.SetStatus(ok, name) })
	}
	return g.Serve(ctx, lis)
}

func runMemory(ctx context.Context, s *settings, logger *slog.Logger) error {
	mem, err := buildMemory(s, logger)
	if err != nil {
		return err
	}
	defer mem.Close()
	return runGRPCRole(ctx, s, logger, memoryserver.ServiceName, mem.Register, mem.Watch, "")
}

func runRouter(ctx context.Context, s *settings, logger *slog.Logger) error {
	rt, err := buildRouter(s, logger, "router")
	if err != nil {
		return err
	}
	return runGRPCRole(ctx, s, logger, routerserver.ServiceName, rt.Register, nil, rt.NotReady())
}

func runExecutor(ctx context.Context, s *settings, logger *slog.Logger) error {
	if err := require(s.routerAddr, "ZEN_ROUTER_ADDR", "executor", "the router"); err != nil {
		return err
	}
	router, err := dial(s, s.routerAddr, "ZEN_ROUTER_ADDR")
	if err != nil {
		return err
	}
	defer router.Close()
	ex, err := buildExecutor(s, router, logger)
	if err != nil {
		return err
	}
	return runGRPCRole(ctx, s, logger, executorserver.ServiceName, ex.Register, nil, "")
}

// remoteConns dials the three services a front role (edge, gateway) needs.
func remoteConns(s *settings, role string) (mem, rt, ex *grpc.ClientConn, err error) {
	for _, r := range []struct{ addr, env, what string }{
		{s.memoryAddr, "ZEN_MEMORY_ADDR", "the memory service"},
		{s.routerAddr, "ZEN_ROUTER_ADDR", "the router"},
		{s.executorAddr, "ZEN_EXECUTOR_ADDR", "the executor"},
	} {
		if err := require(r.addr, r.env, role, r.what); err != nil {
			return nil, nil, nil, err
		}
	}
	if mem, err = dial(s, s.memoryAddr, "ZEN_MEMORY_ADDR"); err != nil {
		return nil, nil, nil, err
	}
	if rt, err = dial(s, s.routerAddr, "ZEN_ROUTER_ADDR"); err != nil {
		return nil, nil, nil, err
	}
	if ex, err = dial(s, s.executorAddr, "ZEN_EXECUTOR_ADDR"); err != nil {
		return nil, nil, nil, err
	}
	return mem, rt, ex, nil
}

func runEdge(ctx context.Context, s *settings, logger *slog.Logger) error {
	mem, rt, ex, err := remoteConns(s, "edge")
	if err != nil {
		return err
	}
	defer closeAll(mem, rt, ex)
	edge, err := newEdge(ctx, s, edgeserver.Conns{Memory: mem, Router: rt, Executor: ex}, logger, true)
	if err != nil {
		return err
	}
	lis, err := listen(logger, s.mcpAddr, "mcp")
	if err != nil {
		return err
	}
	deps := []serve.Dependency{{Name: "memory", Conn: mem}, {Name: "router", Conn: rt}, {Name: "executor", Conn: ex}}
	return serve.HTTP(ctx, lis, edgeMux(edge, deps))
}

func runGateway(ctx context.Context, s *settings, logger *slog.Logger) error {
	mem, rt, ex, err := remoteConns(s, "gateway")
	if err != nil {
		return err
	}
	defer closeAll(mem, rt, ex)
	gw, err := newGateway(ctx, s, gateway.Conns{Memory: mem, Router: rt, Executor: ex})
	if err != nil {
		return err
	}
	lis, err := listen(logger, s.httpAddr, "gateway")
	if err != nil {
		return err
	}
	return serve.HTTP(ctx, serve.LittleUnsent(lis), gw)
}

// holdRouter reports an in-process router not ready, with the reason,
// while it has no model provider. The process serves on: tools/list,
// listmodels and version work, and the tools that need a model say how to
// configure one.
func holdRouter(g *serve.GRPC, rt *routerserver.Server) {
	if reason := rt.NotReady(); reason != "" {
		g.SetNotReady(routerserver.ServiceName, reason)
	}
}

func closeAll(conns ...*grpc.ClientConn) {
	for _, c := range conns {
		_ = c.Close()
	}
}
