package serve

import (
	"context"
	"errors"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/test/bufconn"
)

// MaxMessageBytes bounds one gRPC message: large enough for a thread with
// big turns or an import of many threads.
const MaxMessageBytes = 64 << 20

// DrainTimeout bounds how long a server waits for in-flight calls on
// shutdown before it cuts them (ZEN_DRAIN_TIMEOUT; set once at startup,
// before anything serves).
var DrainTimeout = 20 * time.Second

// GRPC is a gRPC server with health and reflection registered. Services
// registered on it (RegisterService) answer on its port and, through
// Local, to roles in the same process.
type GRPC struct {
	Server *grpc.Server
	Health *health.Server

	health  *healthService // Health, with Watch streams that end on drain
	local   *registry      // the services again, for Local
	mu      sync.Mutex
	serving map[string]bool
}

// notHealthCheck keeps health probes out of traces.
func notHealthCheck(info *stats.RPCTagInfo) bool { return !isHealth(info.FullMethodName) }

// serverStats and clientStats trace and measure every call but health
// checks, on the port (NewGRPC, Dial) and in-process (Local) alike.
func serverStats() stats.Handler { return newRPCStats(false, notHealthCheck) }
func clientStats() stats.Handler { return newRPCStats(true, notHealthCheck) }

// streamWorkers is how many kept goroutines run a server's streams: one for
// each call in flight at the load zen is measured at, the router's 64
// callers. A stream runs on a worker whose stack has grown already rather
// than on a new goroutine (one spawns when all are busy), and an idle worker
// is a parked goroutine. BenchmarkRouterOverhead, 1 caller: p50 0.200 -
// 0.206 ms with none, 0.180 - 0.184 ms with one per core (two here);
// BenchmarkRouterThroughput, 64 callers: 5 - 10% more calls/s and 5 - 9%
// less CPU per call with 64 than with two, which left most streams to new
// goroutines.
const streamWorkers = 64

// Flow-control windows are fixed, which turns off grpc-go's bandwidth
// estimator. Left on, it has each side that receives data, with no PING of
// its own outstanding, send a WINDOW_UPDATE and a PING, which the peer
// acks: six more frames, and the wake-ups to write and read them, on every
// call (TestCallsSendNoFlowControlPings). zen's messages are small beside
// the windows. A connection moves at most 4 MiB a round trip: far more
// than zen sends within a cluster, where a round trip is well under a
// millisecond; across a 40 ms link a 64 MiB message takes about a second.
// BenchmarkRouterOverhead, 1 caller: the p50 the router adds fell from
// 0.086 - 0.107 ms to 0.077 - 0.097 ms; the local cluster's continued chat
// at 50 turns, 1 caller: 10 - 14% less CPU per call (docs/BENCHMARKS.md).
const (
	streamWindow = 1 << 20
	connWindow   = 4 << 20
)

// NewGRPC returns a server that traces every call but health checks, with
// zen's keepalive and connection age (balance.go). opts add to its
// defaults (Security.ServerOptions, for one).
func NewGRPC(opts ...grpc.ServerOption) *GRPC {
	s := grpc.NewServer(slices.Concat([]grpc.ServerOption{
		grpc.StatsHandler(serverStats()), grpc.StatsHandler(healthCompression{}),
		grpc.MaxRecvMsgSize(MaxMessageBytes), grpc.MaxSendMsgSize(MaxMessageBytes),
		grpc.NumStreamWorkers(streamWorkers),
		grpc.StaticStreamWindowSize(streamWindow), grpc.StaticConnWindowSize(connWindow),
	}, serverConnectionOptions(), opts)...)
	h := newHealthService()
	g := &GRPC{Server: s, Health: h.Server, health: h, local: newRegistry()}
	g.RegisterService(guardedHealth(), h)
	reflection.Register(s)
	return g
}

// RegisterService registers a service on the port and for Local
// (grpc.ServiceRegistrar). Register every service before serving.
func (g *GRPC) RegisterService(desc *grpc.ServiceDesc, impl any) {
	fresh := freshReplies(desc, impl) // a mistake panics before anything is registered
	g.Server.RegisterService(desc, impl)
	g.local.register(desc, impl, fresh)
}

// SetServing marks the named services serving.
func (g *GRPC) SetServing(services ...string) {
	for _, s := range services {
		g.SetStatus(true, s)
	}
}

// SetStatus marks one service serving or not. The server as a whole (the
// empty service name a plain health check asks about) serves only while
// every service it knows does, so readiness never depends on the order the
// roles report in.
func (g *GRPC) SetStatus(serving bool, service string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.serving == nil {
		g.serving = map[string]bool{}
	}
	g.serving[service] = serving
	g.health.setReason(service, "")
	g.Health.SetServingStatus(service, status(serving))
	g.setWhole()
}

// SetNotReady marks service NOT_SERVING for a reason only a change of its
// configuration cures (the router without a model provider). Unlike
// SetStatus(false, ...), the server as a whole keeps serving: startup and
// liveness probes, which ask about the whole server, pass, so nothing
// restarts a process a restart would not mend, while readiness, which asks
// about the service, fails. A Check on the service answers
// FailedPrecondition with reason, which probes and zen health print.
func (g *GRPC) SetNotReady(service, reason string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.serving, service)
	g.health.setReason(service, reason)
	g.Health.SetServingStatus(service, status(false))
	g.setWhole()
}

// setWhole reports the server as a whole serving while every service
// counted in g.serving does. g.mu is held.
func (g *GRPC) setWhole() {
	all := true
	for _, ok := range g.serving {
		all = all && ok
	}
	g.Health.SetServingStatus("", status(all))
}

func status(serving bool) healthpb.HealthCheckResponse_ServingStatus {
	if serving {
		return healthpb.HealthCheckResponse_SERVING
	}
	return healthpb.HealthCheckResponse_NOT_SERVING
}

// Serve serves on lis until ctx is done, then reports NOT_SERVING, ends
// health Watch streams (they are not work, and would hold the stop until
// the timeout), drains in-flight calls, from the port and from Local, for
// up to DrainTimeout and stops. With lis nil only Local's callers are
// served (zen stdio opens no port).
func (g *GRPC) Serve(ctx context.Context, lis net.Listener) error {
	errc := make(chan error, 1)
	if lis != nil {
		go func() { errc <- g.Server.Serve(lis) }()
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	g.local.close() // before health says so, so a watcher that hears it finds Local closed
	g.health.drain()
	stopped := make(chan struct{})
	go func() {
		g.Server.GracefulStop()
		g.local.wait()
		close(stopped)
	}()
	select {
	case <-stopped:
	case <-time.After(DrainTimeout):
		g.Server.Stop()
		g.local.stop() // ends the handlers' contexts; their callers hear it
	}
	if lis == nil {
		return nil
	}
	if err := <-errc; err != nil && !errors.Is(err, grpc.ErrServerStopped) {
		return err
	}
	return nil
}

// reconnect is how a client redials a role it lost. gRPC's default backoff
// grows to 120 s between attempts, so a role that had been down a while
// came back to callers that went on waiting: 5.7 s after memory was down
// for 10 s (docs/RELIABILITY.md, "Faults between roles"). At most 1 s
// costs a few dials a second while a role is down. MinConnectTimeout stays
// gRPC's default: without it a dial would get only the backoff's time.
var reconnect = grpc.ConnectParams{
	Backoff: backoff.Config{
		BaseDelay:  100 * time.Millisecond,
		Multiplier: 1.6,
		Jitter:     0.2,
		MaxDelay:   time.Second,
	},
	MinConnectTimeout: 20 * time.Second,
}

// Dial connects lazily to a gRPC target (CheckTarget's forms), tracing
// every call and spreading calls over every replica the target names
// (balance.go).
func Dial(target string, opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	target, list := targetOptions(target)
	return grpc.NewClient(target, slices.Concat([]grpc.DialOption{
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithConnectParams(reconnect),
		grpc.WithStatsHandler(clientStats()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes)),
		grpc.WithStaticStreamWindowSize(streamWindow), grpc.WithStaticConnWindowSize(connWindow),
	}, balanceOptions(), list, auth.ClientInterceptor(), opts)...)
}

// InProcess is an in-memory listener for tests that want a real gRPC
// server and client without opening a port. Roles that share a process use
// Local, which skips HTTP/2 altogether.
type InProcess struct{ lis *bufconn.Listener }

// NewInProcess returns an in-memory listener.
func NewInProcess() *InProcess { return &InProcess{lis: bufconn.Listen(1 << 20)} }

// Listener is what the server serves on.
func (p *InProcess) Listener() net.Listener { return p.lis }

// Serve serves srv on the in-memory listener and connects to it, with
// opts added to Dial's defaults; stop closes the connection and stops srv.
func (p *InProcess) Serve(srv *grpc.Server, opts ...grpc.DialOption) (conn *grpc.ClientConn, stop func(), err error) {
	go func() { _ = srv.Serve(p.lis) }()
	if conn, err = p.Dial(opts...); err != nil {
		srv.Stop()
		return nil, nil, err
	}
	return conn, func() { conn.Close(); srv.Stop() }, nil
}

// Dial connects to the in-memory listener; opts add to Dial's defaults.
func (p *InProcess) Dial(opts ...grpc.DialOption) (*grpc.ClientConn, error) {
	return Dial("passthrough:///in-process", append([]grpc.DialOption{grpc.WithContextDialer(
		func(ctx context.Context, _ string) (net.Conn, error) { return p.lis.DialContext(ctx) })}, opts...)...)
}
