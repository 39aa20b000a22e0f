package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/config"
	"github.com/zenmcp/zen/services/platform/secrets"
	"github.com/zenmcp/zen/services/platform/serve"
)

// settings are the flags every role understands; each flag's default comes
// from its variable, so `--grpc-addr` and ZEN_GRPC_ADDR mean the same.
type settings struct {
	mcpAddr, httpAddr, grpcAddr          string
	memoryAddr, routerAddr, executorAddr string
	logLevel                             string
	metricsAddr                          string
	pprofAddr                            string
	drainTimeout                         string
	drain                                time.Duration  // drainTimeout, parsed
	security                             serve.Security // ZEN_SERVICE_TOKEN, ZEN_GRPC_TLS_*
	getenv                               config.Getenv
	secrets                              *secrets.Scrubber // scrubbed from logs and results
}

type flagSpec struct {
	name, env, def, usage string
	dst                   func(*settings) *string
}

var flagSpecs = []flagSpec{
	{"mcp-addr", "ZEN_MCP_ADDR", "127.0.0.1:8080", "address MCP streamable HTTP listens on (path /mcp)", func(s *settings) *string { return &s.mcpAddr }},
	{"http-addr", "ZEN_HTTP_ADDR", "127.0.0.1:8081", "address the HTTP gateway listens on", func(s *settings) *string { return &s.httpAddr }},
	{"grpc-addr", "ZEN_GRPC_ADDR", "127.0.0.1:9090", "address gRPC services listen on", func(s *settings) *string { return &s.grpcAddr }},
	{"memory-addr", "ZEN_MEMORY_ADDR", "", "address of a remote memory service", func(s *settings) *string { return &s.memoryAddr }},
	{"router-addr", "ZEN_ROUTER_ADDR", "", "address of a remote router service", func(s *settings) *string { return &s.routerAddr }},
	{"executor-addr", "ZEN_EXECUTOR_ADDR", "", "address of a remote executor service", func(s *settings) *string { return &s.executorAddr }},
	{"log-level", "LOG_LEVEL", "INFO", "DEBUG, INFO, WARNING or ERROR", func(s *settings) *string { return &s.logLevel }},
	{"drain-timeout", "ZEN_DRAIN_TIMEOUT", "20s", "how long a stopping role lets calls in flight finish (e.g. 100s; keep it under Kubernetes' terminationGracePeriodSeconds)", func(s *settings) *string { return &s.drainTimeout }},
	{"metrics-addr", "ZEN_METRICS_ADDR", "", "address to serve Prometheus metrics on (path /metrics); off when empty", func(s *settings) *string { return &s.metricsAddr }},
	{"pprof-addr", "ZEN_PPROF_ADDR", "", "address to serve Go's profiles on (path /debug/pprof/); off when empty; " +
		"whoever reaches it can profile zen, so keep it on loopback or a trusted network",
		func(s *settings) *string { return &s.pprofAddr }},
}

// parseSettings reads flags over variables over defaults, then checks the
// addresses, naming the variable of any bad value.
func parseSettings(role string, args []string, getenv config.Getenv, stderr io.Writer) (*settings, error) {
	s := &settings{getenv: getenv}
	fs := flag.NewFlagSet("zen "+role, flag.ContinueOnError)
	fs.SetOutput(stderr)
	for _, f := range flagSpecs {
		fs.StringVar(f.dst(s), f.name, config.String(getenv, f.env, f.def), f.usage+" ("+f.env+")")
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("zen %s takes no arguments, got %q", role, strings.Join(fs.Args(), " "))
	}
	for _, f := range flagSpecs {
		if !strings.HasSuffix(f.name, "-addr") {
			continue
		}
		v := *f.dst(s)
		if _, err := config.Addr(func(string) string { return v }, f.env, ""); err != nil {
			return nil, err
		}
	}
	var err error
	if s.drain, err = config.Duration(func(string) string { return s.drainTimeout }, "ZEN_DRAIN_TIMEOUT", 20*time.Second, time.Second, time.Hour); err != nil {
		return nil, err
	}
	if s.security, err = roleSecurity(role, getenv); err != nil {
		return nil, err
	}
	return s, nil
}

// roleSecurity is how the role's gRPC calls prove they come from zen. With
// client tokens configured the inner services must know zen's roles from
// anyone who reaches their ports: a split role needs ZEN_SERVICE_TOKEN, and
// serve, whose roles share one process, makes a token of its own.
func roleSecurity(role string, getenv config.Getenv) (serve.Security, error) {
	sec, err := serve.LoadSecurity(getenv)
	if err != nil {
		return sec, err
	}
	tokens, err := auth.Load(getenv)
	if err != nil {
		return sec, err
	}
	switch {
	case !tokens.On() || sec.Required():
		return sec, nil
	case role == "serve" || role == "stdio":
		return sec.WithGeneratedToken(), nil
	default:
		return sec, serve.ErrServiceTokenNeeded
	}
}

// require names the variable a role needs but was not given.
func require(value, env, role, what string) error {
	if value == "" {
		return fmt.Errorf("zen %s needs %s: set %s (or --%s) to its host:port", role, what, env,
			strings.ToLower(strings.ReplaceAll(strings.TrimPrefix(env, "ZEN_"), "_", "-")))
	}
	return nil
}
