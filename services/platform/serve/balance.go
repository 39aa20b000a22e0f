package serve

import (
	"encoding/json"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/resolver/manual"
)

// How calls spread over a role's replicas (docs/OPERATIONS.md, "How calls
// spread"). Kubernetes balances connections, not requests, and gRPC keeps
// one HTTP/2 connection per backend: with gRPC's default pick_first every
// call of a client would go to one replica. So every client dials every
// replica its target resolves to and spreads calls over them one by one
// (round_robin, grpc-go's standard policy; no proxy, no xDS control plane
// to run), servers close connections after MaxConnectionAge so clients
// resolve again and meet replicas added since, and retries of the
// idempotent calls land on another replica when one goes away.

// MaxConnectionAge is how long a server keeps a client's connection before
// asking it (GOAWAY) to dial again, which makes the client resolve its
// target again: a replica added behind a dns:/// name gets calls within
// about this long (plus gRPC's 30 s floor between resolutions).
// ZEN_GRPC_MAX_CONNECTION_AGE; set once at startup, before anything serves.
var MaxConnectionAge = 30 * time.Second

// MaxConnectionAgeGrace is how long calls in flight on a connection that
// reached its age may go on before it is closed under them. It outlasts
// the longest call zen makes (a model call or a clink run, at most 30 min
// by default: ZEN_PROVIDER_TIMEOUT, clink's timeout), so a routine
// reconnect, every MaxConnectionAge, never cuts one; a connection closes
// as soon as its last call ends, so the length costs nothing. It must also
// exceed DrainTimeout. ZEN_GRPC_MAX_CONNECTION_AGE_GRACE; set once at
// startup.
var MaxConnectionAgeGrace = 31 * time.Minute

// Keepalive, the same on both ends. The client pings a connection it has
// heard nothing on for clientPingAfter and drops it when no answer comes
// within pingTimeout: a peer that vanished without closing its socket (a
// black-holed node, a connection a cloud load balancer forgot) fails the
// calls on it, which the retries below then send elsewhere, instead of
// holding them until TCP gives up minutes later. The pings also keep idle
// connections alive through load balancers that cut them after minutes.
// The server accepts pings as often as serverMinPing, below the client's
// rate, so it never answers them with GOAWAY "too_many_pings"; its own
// pings find clients that vanished.
const (
	clientPingAfter = 10 * time.Second
	serverPingAfter = 30 * time.Second
	pingTimeout     = 5 * time.Second
	serverMinPing   = 5 * time.Second
)

var clientKeepalive = keepalive.ClientParameters{Time: clientPingAfter, Timeout: pingTimeout, PermitWithoutStream: true}

// serverConnectionOptions are the keepalive and connection-age settings
// every gRPC server gets (NewGRPC).
func serverConnectionOptions() []grpc.ServerOption {
	return []grpc.ServerOption{
		grpc.KeepaliveEnforcementPolicy(keepalive.EnforcementPolicy{MinTime: serverMinPing, PermitWithoutStream: true}),
		grpc.KeepaliveParams(keepalive.ServerParameters{
			MaxConnectionAge: MaxConnectionAge, MaxConnectionAgeGrace: MaxConnectionAgeGrace,
			Time: serverPingAfter, Timeout: pingTimeout,
		}),
	}
}

// memoryCallTimeout bounds one of memory's unary calls (all attempts): a
// read of the largest thread takes milliseconds, and SQLite waits at most
// 10 s for another process's write lock. Without it a memory that stopped
// answering held the edge's call until the client gave up. The saves
// (CreateThread, AppendTurns) are bounded by the edge's save window, which
// retries them; an import moves many threads at once.
const (
	memoryCallTimeout   = 15 * time.Second
	memoryImportTimeout = 2 * time.Minute
)

// retriedMethods are the calls retried on Unavailable: those a second
// attempt cannot do twice. Reads, model resolution and listings, and
// AppendTurns, whose every caller (the edge) sends an exchange id, so an
// append stored by an attempt whose answer was lost is not stored again.
// Never CreateThread (a second thread), DeleteThread, BranchThread or
// ImportThreads (they change the store), and never a model call
// (ExecuteTool, Generate): a streaming call that produced output is not
// replayed. gRPC itself retries only an attempt that got no reply yet, and
// retries any call, these too, that never reached a server.
var retriedMethods = map[string][]string{
	memoryService: {"GetSettings", "PrepareCall", "GetThread", "ListThreads", "SelectHistory",
		"ExportThreads", "AppendTurns"},
	"zen.router.v1.RouterService":     {"ListModels", "GetModel", "ResolveModel"},
	"zen.executor.v1.ExecutorService": {"ListTools"},
}

// memoryTimeouts are the per-call deadlines of memory's unary calls (see
// memoryCallTimeout).
var memoryTimeouts = map[string]time.Duration{
	"GetSettings": memoryCallTimeout, "PrepareCall": memoryCallTimeout, "GetThread": memoryCallTimeout,
	"ListThreads": memoryCallTimeout, "SelectHistory": memoryCallTimeout, "DeleteThread": memoryCallTimeout,
	"BranchThread": memoryCallTimeout, "ImportThreads": memoryImportTimeout,
}

// ConfiguredMethods are the calls the service config names, as
// package.Service/Method: the retried ones and those with a deadline. gRPC
// silently ignores a name that matches no method, so a renamed RPC would
// lose its retries or deadline unnoticed; cmd/zen's tests check every name
// against the protos.
func ConfiguredMethods() []string {
	var names []string
	for service, methods := range retriedMethods {
		for _, m := range methods {
			names = append(names, service+"/"+m)
		}
	}
	for m := range memoryTimeouts {
		names = append(names, memoryService+"/"+m)
	}
	return names
}

// memoryService is memory's gRPC service, whose calls have deadlines.
const memoryService = "zen.memory.v1.MemoryService"

// The service config's JSON shape (gRPC's service config, A6 for retries).
type (
	serviceConfig struct {
		LoadBalancing   []map[string]struct{} `json:"loadBalancingConfig"`
		HealthCheck     healthCheckConfig     `json:"healthCheckConfig"`
		MethodConfig    []methodConfig        `json:"methodConfig"`
		RetryThrottling retryThrottling       `json:"retryThrottling"`
	}
	healthCheckConfig struct {
		ServiceName string `json:"serviceName"` // "" is the server as a whole
	}
	methodConfig struct {
		Name        []methodName `json:"name"`
		Timeout     string       `json:"timeout,omitempty"`
		RetryPolicy *retryPolicy `json:"retryPolicy,omitempty"`
	}
	methodName struct {
		Service string `json:"service"`
		Method  string `json:"method"`
	}
	retryPolicy struct {
		MaxAttempts          int      `json:"maxAttempts"`
		InitialBackoff       string   `json:"initialBackoff"`
		MaxBackoff           string   `json:"maxBackoff"`
		BackoffMultiplier    float64  `json:"backoffMultiplier"`
		RetryableStatusCodes []string `json:"retryableStatusCodes"`
	}
	retryThrottling struct {
		MaxTokens  int     `json:"maxTokens"`
		TokenRatio float64 `json:"tokenRatio"`
	}
)

// unavailableRetry tries a call up to four times, 50 ms to 1 s apart: the
// next attempt picks the next ready replica.
var unavailableRetry = retryPolicy{MaxAttempts: 4, InitialBackoff: "0.05s", MaxBackoff: "1s", BackoffMultiplier: 2,
	RetryableStatusCodes: []string{"UNAVAILABLE"}}

// defaultServiceConfig is the service config of every client connection:
// round_robin over the replicas whose health says SERVING, the retries,
// memory's deadlines, and a retry budget (gRPC stops retrying on a
// connection once more than half of 20 tokens are spent, a failure costing
// one and a success giving back 0.1), so a role that is down everywhere is
// not hammered.
//
// The health checked is the server's as a whole (GRPC.SetStatus): a
// replica that drains, or a memory that lost its store, gets no calls
// while another replica serves, which in a fixed list (make cluster) no
// readiness probe would arrange. A service held not ready for want of
// configuration (GRPC.SetNotReady: the router without a provider) leaves
// the server SERVING, so calls still reach it and hear why. The client's
// side of health checking is registered by the import of grpc/health
// (grpc.go); zen health dials without it, to ask about any server.
func defaultServiceConfig() string {
	sc := serviceConfig{
		LoadBalancing:   []map[string]struct{}{{"round_robin": {}}},
		HealthCheck:     healthCheckConfig{ServiceName: ""},
		RetryThrottling: retryThrottling{MaxTokens: 20, TokenRatio: 0.1},
	}
	retried := map[methodName]bool{}
	for service, methods := range retriedMethods {
		for _, m := range methods {
			retried[methodName{service, m}] = true
		}
	}
	add := func(name methodName, timeout time.Duration) {
		mc := methodConfig{Name: []methodName{name}}
		if timeout > 0 {
			mc.Timeout = strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64) + "s"
		}
		if retried[name] {
			p := unavailableRetry
			mc.RetryPolicy = &p
		}
		sc.MethodConfig = append(sc.MethodConfig, mc)
	}
	for name := range retried {
		if name.Service != memoryService || memoryTimeouts[name.Method] == 0 {
			add(name, 0)
		}
	}
	for method, timeout := range memoryTimeouts {
		add(methodName{memoryService, method}, timeout)
	}
	raw, err := json.Marshal(sc)
	if err != nil {
		panic(err) // fixed types: cannot happen
	}
	return string(raw)
}

// serviceConfigJSON is defaultServiceConfig, made once.
var serviceConfigJSON = defaultServiceConfig()

// CheckTarget says what is wrong with an address of a role's peers
// (ZEN_MEMORY_ADDR and the like), or returns nil. Three forms:
//
//	host:port                        one address, resolved by DNS (every address the name has)
//	host:port,host:port,...          a fixed list of replicas (the local cluster's)
//	dns:///name:port                 DNS, explicitly: a Kubernetes headless Service
//
// gRPC's passthrough:/// and unix:/// pass unchanged; other schemes (a
// mistaken http://) are refused.
func CheckTarget(raw string) error {
	raw = strings.TrimSpace(raw)
	if scheme, rest, ok := strings.Cut(raw, "://"); ok && !strings.Contains(scheme, ",") {
		switch scheme {
		case "passthrough", "unix", "unix-abstract":
			return nil // gRPC's own, for tests and sockets
		case "dns":
		default:
			return fmt.Errorf("%q: zen dials host:port, a list of them, or dns:///name:port, not %s://", raw, scheme)
		}
		// dns://[authority]/host:port: the DNS server to ask is optional.
		_, hostport, ok := strings.Cut(rest, "/")
		if !ok || checkHostPort(hostport) != nil {
			return fmt.Errorf("%q: want dns:///name:port, such as dns:///zen-memory:9090", raw)
		}
		return nil
	}
	list := strings.Split(raw, ",")
	if len(list) > maxListed {
		return fmt.Errorf("%q names %d addresses; zen dials at most %d replicas of a role by list: "+
			"for more, use a DNS name (dns:///name:port, a Kubernetes headless Service)", raw, len(list), maxListed)
	}
	for _, a := range list {
		if err := checkHostPort(strings.TrimSpace(a)); err != nil {
			return fmt.Errorf("%q: %w; want host:port, a comma-separated list of them "+
				"(127.0.0.1:9091,127.0.0.1:9101), or dns:///name:port", raw, err)
		}
	}
	return nil
}

// maxListed bounds a list of addresses: each is a connection every client
// holds and health-checks, and a list that long is a mistake (a file
// pasted, a loop gone wrong) sooner than a deployment, which names a DNS
// name instead.
const maxListed = 64

func checkHostPort(a string) error {
	host, port, err := net.SplitHostPort(a)
	if err != nil || host == "" {
		return fmt.Errorf("%q is not host:port", a)
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return fmt.Errorf("%q: the port must be a number from 1 to 65535", a)
	}
	return nil
}

// listSchemes numbers the resolvers of fixed lists: each connection gets
// its own (grpc.WithResolvers), so the scheme only has to be unique.
var listSchemes atomic.Uint64

// targetOptions turns a list of addresses into a target gRPC can dial: a
// resolver of its own that reports every address, balanced like any other
// (round_robin). Any other target is gRPC's own: host:port goes through
// DNS. TLS checks each replica's certificate against the host that replica
// was named by, as if it alone had been dialed.
func targetOptions(target string) (string, []grpc.DialOption) {
	if !strings.Contains(target, ",") || strings.Contains(target, "://") {
		return target, nil
	}
	var addrs []resolver.Address
	var named []string
	for _, a := range strings.Split(target, ",") {
		if a = strings.TrimSpace(a); a != "" {
			host, _, err := net.SplitHostPort(a)
			if err != nil {
				host = a // CheckTarget refuses it; gRPC's dial then says why too
			}
			addrs = append(addrs, resolver.Address{Addr: a, ServerName: host})
			named = append(named, a)
		}
	}
	r := manual.NewBuilderWithScheme(fmt.Sprintf("zen-list-%d", listSchemes.Add(1)))
	r.InitialState(resolver.State{Addresses: addrs})
	return r.Scheme() + ":///" + strings.Join(named, ","), []grpc.DialOption{grpc.WithResolvers(r)}
}

// balanceOptions are the dial options every client connection gets: the
// service config (resolvers' own are ignored: a DNS TXT record must not
// change zen's retries) and keepalive.
func balanceOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultServiceConfig(serviceConfigJSON),
		grpc.WithDisableServiceConfig(),
		grpc.WithKeepaliveParams(clientKeepalive),
	}
}
