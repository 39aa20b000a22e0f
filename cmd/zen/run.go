package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/hostguard"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/telemetry"
)

const usage = `zen: a multi-model MCP server

Usage: zen <command> [flags]

Commands:
  serve      every role in one process: MCP on 127.0.0.1:8080/mcp, gateway on 127.0.0.1:8081, gRPC on 127.0.0.1:9090
  stdio      MCP over stdin/stdout; other roles in-process unless ZEN_MEMORY_ADDR / ZEN_ROUTER_ADDR / ZEN_EXECUTOR_ADDR are set
  edge       the MCP front door (needs ZEN_MEMORY_ADDR, ZEN_ROUTER_ADDR, ZEN_EXECUTOR_ADDR)
  memory     conversation threads (gRPC)
  router     models and providers (gRPC)
  executor   tools and prompts (gRPC; needs ZEN_ROUTER_ADDR)
  gateway    HTTP/JSON inspection (needs ZEN_MEMORY_ADDR, ZEN_ROUTER_ADDR, ZEN_EXECUTOR_ADDR)
  health     check a running zen: --grpc host:port (a gRPC role) or --http URL (/readyz of edge or gateway)
  version    print the version

Run "zen <command> -h" for the flags; each flag also reads the variable named in its help.
`

// roles maps each command to what it runs.
var roles = map[string]func(context.Context, *settings, *slog.Logger) error{
	"serve": runServe, "stdio": runStdio, "edge": runEdge, "memory": runMemory,
	"router": runRouter, "executor": runExecutor, "gateway": runGateway,
}

func run(ctx context.Context, args []string, getenv config.Getenv) error {
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprint(os.Stderr, usage)
		if len(args) == 0 {
			return errors.New("no command given")
		}
		return nil
	}
	role := args[0]
	if role == "health" {
		return runHealth(ctx, args[1:], getenv, os.Stderr)
	}
	if role == "version" {
		fmt.Printf("zen %s (commit %s, %s, %s/%s)\n", version, commit, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return nil
	}
	start, ok := roles[role]
	if !ok {
		return fmt.Errorf("unknown command %q; commands are %s", role, "serve, stdio, edge, memory, router, executor, gateway, health, version")
	}
	envFiles := dotEnvFiles(getenv, role)
	getenv, err := config.WithDotEnvFiles(envFiles, getenv)
	if err != nil {
		return fmt.Errorf(".env: %w", err)
	}
	if role == "stdio" {
		if err := absoluteConfigPaths(getenv); err != nil {
			return err
		}
	}
	// What the runtime and the trace SDK read is the process's own
	// environment, whatever run was given.
	if err := settleSDKEnvironment(telemetry.ForSDK(getenv, os.Getenv)); err != nil {
		return err
	}
	if err := applyGOMAXPROCS(getenv); err != nil {
		return err
	}
	s, err := parseSettings(role, args[1:], getenv, os.Stderr)
	if err != nil {
		return err
	}
	if err := checkExposure(s, role); err != nil {
		return err
	}
	serve.DrainTimeout = s.drain // before anything serves
	serve.MaxConnectionAge, serve.MaxConnectionAgeGrace = s.age, s.ageGrace
	level, err := telemetry.ParseLevel(s.logLevel)
	if err != nil {
		return err
	}
	s.envFiles = envFiles
	s.secrets = loadSecrets(getenv, envFiles...)
	sink, err := openLog(role, s.logFile, getenv)
	if err != nil {
		return err
	}
	defer sink.close()
	logger := telemetry.NewLogger(sink.w, level, s.secrets.String).With("role", role)
	if grpcLog != nil {
		grpcLog.Use(logger)
	}
	sink.report(logger)
	noteUnreadDotEnv(logger, role, envFiles)
	noteOpenPorts(logger, s, role)
	var scrubSpans func(string) string
	if !s.secrets.Empty() {
		scrubSpans = s.secrets.String
	}
	_, shutdown, err := telemetry.Setup(ctx, "zen-"+role, version, getenv, logger, scrubSpans)
	if err != nil {
		return err
	}
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(flushCtx); err != nil {
			logger.Warn("flush traces", "err", err)
		}
	}()
	logger.Info("starting", "version", version)
	// The metrics and profile listeners answer the names and addresses
	// the others do, and any address, as scrapers name a pod: not a page's
	// own host name, which is how DNS rebinding reaches a listener.
	hosts, err := hostguard.Load(getenv)
	if err != nil {
		return err
	}
	byAddress := hosts.AnyAddress()
	if s.metricsAddr != "" {
		stop, err := serveMetrics(ctx, s.metricsAddr, "zen-"+role, byAddress, logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	if s.pprofAddr != "" {
		stop, err := servePprof(s.pprofAddr, byAddress, logger)
		if err != nil {
			return err
		}
		defer stop()
	}
	if err := start(ctx, s, logger); err != nil {
		return err
	}
	logger.Info("stopped")
	return nil
}

// serveMetrics exposes the process's metrics for Prometheus until stop is
// called.
func serveMetrics(ctx context.Context, addr, service string, hosts hostguard.Hosts,
	logger *slog.Logger) (stop func(), err error) {
	h, err := telemetry.SetupMetrics(service, version)
	if err != nil {
		return nil, err
	}
	lis, err := listen(logger, addr, "metrics")
	if err != nil {
		return nil, fmt.Errorf("ZEN_METRICS_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", h)
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := serve.HTTP(ctx, lis, hosts.Protect(hostguard.NotFromPages(mux))); err != nil {
			logger.Warn("metrics endpoint stopped", "err", err)
		}
	}()
	return func() { cancel(); <-done }, nil
}

// settleSDKEnvironment puts in the process environment what the OTLP
// exporter and the trace SDK read from it alone ("" unsets), so that a
// .env file sets them as it sets every other variable.
func settleSDKEnvironment(vars map[string]string) error {
	for k, v := range vars {
		var err error
		if v == "" {
			err = os.Unsetenv(k)
		} else {
			err = os.Setenv(k, v)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	return nil
}

// maxProcs bounds GOMAXPROCS: the runtime allocates per thread, and
// 200,000 of them ran a process out of memory at start.
const maxProcs = 1024

// applyGOMAXPROCS checks a GOMAXPROCS that is set, and applies one that a
// .env file sets: the runtime reads only the process environment for it,
// and ignores a bad value there without a word.
func applyGOMAXPROCS(getenv config.Getenv) error {
	v := strings.TrimSpace(getenv("GOMAXPROCS"))
	if v == "" {
		return nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxProcs {
		return fmt.Errorf("GOMAXPROCS=%q: want a whole number of threads, 1 to %d", v, maxProcs)
	}
	if strings.TrimSpace(os.Getenv("GOMAXPROCS")) != v {
		runtime.GOMAXPROCS(n)
	}
	return nil
}

// gomaxprocsSet tells whether GOMAXPROCS is set where zen reads it or
// where the runtime does (under ZEN_MCP_FORCE_ENV_OVERRIDE zen's lookup
// sees the .env files only): a count set there stands.
func gomaxprocsSet(getenv config.Getenv) bool {
	return strings.TrimSpace(getenv("GOMAXPROCS")) != "" || strings.TrimSpace(os.Getenv("GOMAXPROCS")) != ""
}
