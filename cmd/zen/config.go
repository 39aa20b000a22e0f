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
	logFile                              string // ZEN_LOG_FILE; see openLog
	metricsAddr                          string
	pprofAddr                            string
	drainTimeout                         string
	drain                                time.Duration  // drainTimeout, parsed
	connAge, connAgeGrace                string         // ZEN_GRPC_MAX_CONNECTION_AGE(_GRACE)
	age, ageGrace                        time.Duration  // connAge, connAgeGrace, parsed
	security                             serve.Security // ZEN_SERVICE_TOKEN, ZEN_GRPC_TLS_*
	clientTokens                         bool           // ZEN_AUTH_TOKEN or ZEN_AUTH_TOKENS_FILE names some
	getenv                               config.Getenv
	envFiles                             []string          // the .env files read, in precedence order
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
	{"memory-addr", "ZEN_MEMORY_ADDR", "", "address of a remote memory service" + peersForms,
		func(s *settings) *string { return &s.memoryAddr }},
	{"router-addr", "ZEN_ROUTER_ADDR", "", "address of a remote router service" + peersForms,
		func(s *settings) *string { return &s.routerAddr }},
	{"executor-addr", "ZEN_EXECUTOR_ADDR", "", "address of a remote executor service" + peersForms,
		func(s *settings) *string { return &s.executorAddr }},
	{"log-level", "LOG_LEVEL", "INFO", "DEBUG, INFO, WARNING or ERROR", func(s *settings) *string { return &s.logLevel }},
	{"log-file", "ZEN_LOG_FILE", "", "file to log to besides stderr, rotated at 10 MB; off for none " +
		"(default: zen.log in the state directory for stdio, none for other commands)",
		func(s *settings) *string { return &s.logFile }},
	{"drain-timeout", "ZEN_DRAIN_TIMEOUT", "20s", "how long a stopping role lets calls in flight finish (e.g. 100s; keep it under Kubernetes' terminationGracePeriodSeconds)", func(s *settings) *string { return &s.drainTimeout }},
	{"grpc-max-connection-age", "ZEN_GRPC_MAX_CONNECTION_AGE", "30s", "how long a gRPC server keeps a client's " +
		"connection before asking it to reconnect (and resolve again, meeting new replicas)",
		func(s *settings) *string { return &s.connAge }},
	{"grpc-max-connection-age-grace", "ZEN_GRPC_MAX_CONNECTION_AGE_GRACE", "31m", "how long calls in flight on an " +
		"aged connection may finish before it closes: longer than the longest model call, and than ZEN_DRAIN_TIMEOUT",
		func(s *settings) *string { return &s.connAgeGrace }},
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
		if peerAddrs[f.env] {
			if err := serve.CheckTarget(v); v != "" && err != nil {
				return nil, fmt.Errorf("%s=%w", f.env, err)
			}
			continue
		}
		if _, err := config.Addr(func(string) string { return v }, f.env, ""); err != nil {
			return nil, err
		}
	}
	var err error
	if s.drain, err = config.Duration(func(string) string { return s.drainTimeout }, "ZEN_DRAIN_TIMEOUT", 20*time.Second, time.Second, time.Hour); err != nil {
		return nil, err
	}
	if err := s.parseConnectionAge(); err != nil {
		return nil, err
	}
	if s.security, s.clientTokens, err = roleSecurity(role, getenv); err != nil {
		return nil, err
	}
	return s, nil
}

// peersForms is what the peer address variables accept (serve.CheckTarget).
const peersForms = ": host:port, a comma-separated list of replicas' host:port, or dns:///name:port " +
	"(every address the name has); calls spread over all of them"

// peerAddrs are the variables naming other roles, which may name several
// replicas.
var peerAddrs = map[string]bool{"ZEN_MEMORY_ADDR": true, "ZEN_ROUTER_ADDR": true, "ZEN_EXECUTOR_ADDR": true}

// parseConnectionAge reads the gRPC servers' connection age and its grace,
// which must outlast the drain: a connection reaching its age must not cut
// a call that a shutdown would let finish (serve.MaxConnectionAgeGrace).
func (s *settings) parseConnectionAge() error {
	var err error
	if s.age, err = config.Duration(func(string) string { return s.connAge }, "ZEN_GRPC_MAX_CONNECTION_AGE",
		30*time.Second, time.Second, 24*time.Hour); err != nil {
		return err
	}
	if s.ageGrace, err = config.Duration(func(string) string { return s.connAgeGrace },
		"ZEN_GRPC_MAX_CONNECTION_AGE_GRACE", serve.MaxConnectionAgeGrace, time.Second, 24*time.Hour); err != nil {
		return err
	}
	if s.ageGrace <= s.drain {
		return fmt.Errorf("ZEN_GRPC_MAX_CONNECTION_AGE_GRACE=%q: must exceed ZEN_DRAIN_TIMEOUT (%s), or a connection "+
			"reaching its age could cut a call that a shutdown would let finish", s.connAgeGrace, s.drain)
	}
	return nil
}

// roleSecurity is how the role's gRPC calls prove they come from zen. With
// client tokens configured the inner services must know zen's roles from
// anyone who reaches their ports: a split role needs ZEN_SERVICE_TOKEN, and
// serve, whose roles share one process, makes a token of its own. It
// reports too whether client tokens are configured.
func roleSecurity(role string, getenv config.Getenv) (serve.Security, bool, error) {
	sec, err := serve.LoadSecurity(getenv)
	if err != nil {
		return sec, false, err
	}
	tokens, err := auth.Load(getenv)
	if err != nil {
		return sec, false, err
	}
	switch {
	case !tokens.On() || sec.Required():
		return sec, tokens.On(), nil
	case role == "serve" || role == "stdio":
		return sec.WithGeneratedToken(), true, nil
	default:
		return sec, true, serve.ErrServiceTokenNeeded
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
