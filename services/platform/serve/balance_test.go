package serve

import (
	"context"
	"encoding/json"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"
)

func TestCheckTarget(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		target, wantErr string
	}{
		{"127.0.0.1:9091", ""},
		{"zen-memory:9090", ""},
		{"127.0.0.1:9091,127.0.0.1:9101", ""},
		{"127.0.0.1:9091, 127.0.0.1:9101", ""},
		{"dns:///zen-memory:9090", ""},
		{"dns://10.0.0.10:53/zen-memory.zen.svc:9090", ""},
		{"passthrough:///in-process", ""},
		{"zen-memory", "is not host:port"},
		{"127.0.0.1:9091,zen-memory", `"zen-memory" is not host:port`},
		{"127.0.0.1:0", "the port must be a number from 1 to 65535"},
		{"dns:///zen-memory", "want dns:///name:port"},
		{"dns:zen-memory:9090", "is not host:port"},
		{"http://zen-memory:9090", "not http://"},
	} {
		err := CheckTarget(tc.target)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tc.wantErr == "" && err != nil || tc.wantErr != "" && !strings.Contains(got, tc.wantErr) {
			t.Errorf("CheckTarget(%q) = %q, want an error containing %q", tc.target, got, tc.wantErr)
		}
	}
}

// TestServiceConfig pins what is retried and what has a deadline: a retry
// of a call that is not idempotent would do it twice.
func TestServiceConfig(t *testing.T) {
	t.Parallel()
	var sc serviceConfig
	if err := json.Unmarshal([]byte(serviceConfigJSON), &sc); err != nil {
		t.Fatal(err)
	}
	type policy struct {
		Timeout string
		Retried bool
	}
	got := map[string]policy{}
	for _, mc := range sc.MethodConfig {
		for _, n := range mc.Name {
			got[n.Service+"/"+n.Method] = policy{mc.Timeout, mc.RetryPolicy != nil}
		}
	}
	const mem, rt = "zen.memory.v1.MemoryService/", "zen.router.v1.RouterService/"
	want := map[string]policy{
		mem + "GetSettings": {"15s", true}, mem + "PrepareCall": {"15s", true}, mem + "GetThread": {"15s", true},
		mem + "ListThreads": {"15s", true}, mem + "SelectHistory": {"15s", true}, mem + "ExportThreads": {"", true},
		mem + "AppendTurns": {"", true}, mem + "DeleteThread": {"15s", false}, mem + "BranchThread": {"15s", false},
		mem + "ImportThreads": {"120s", false}, rt + "ListModels": {"", true}, rt + "GetModel": {"", true},
		rt + "ResolveModel": {"", true}, "zen.executor.v1.ExecutorService/ListTools": {"", true},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("method configs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]map[string]struct{}{{"round_robin": {}}}, sc.LoadBalancing); diff != "" {
		t.Errorf("load balancing (-want +got):\n%s", diff)
	}
	if !strings.Contains(serviceConfigJSON, `"healthCheckConfig":{"serviceName":""}`) {
		t.Errorf("the service config does not check the whole server's health: %s", serviceConfigJSON)
	}
}

// TestKeepaliveAgrees: a client that pings more often than its server
// permits is sent GOAWAY (too_many_pings) and its calls fail.
func TestKeepaliveAgrees(t *testing.T) {
	t.Parallel()
	if clientKeepalive.Time < serverMinPing || !clientKeepalive.PermitWithoutStream {
		t.Errorf("clients ping after %s (without calls: %t); servers allow a ping every %s, with or without calls",
			clientKeepalive.Time, clientKeepalive.PermitWithoutStream, serverMinPing)
	}
	if MaxConnectionAgeGrace <= DrainTimeout {
		t.Errorf("MaxConnectionAgeGrace %s should exceed DrainTimeout %s", MaxConnectionAgeGrace, DrainTimeout)
	}
}

// replica is one server of a fake zen service: every method of desc
// answers through handle, and the replica counts its calls.
type replica struct {
	addr   string
	g      *GRPC
	calls  atomic.Int64
	accept atomic.Int64 // connections accepted
	handle func(ctx context.Context, method string) error
}

// countingListener counts the connections it accepts.
type countingListener struct {
	net.Listener
	n *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.n.Add(1)
	}
	return c, err
}

// fakeZenService is a service with zen's name and methods whose messages
// are all Empty: enough for the service config, which goes by name.
func fakeZenService(service string, unary []string, stream string, r *replica) *grpc.ServiceDesc {
	desc := &grpc.ServiceDesc{ServiceName: service, HandlerType: (*any)(nil)}
	for _, m := range unary {
		desc.Methods = append(desc.Methods, grpc.MethodDesc{MethodName: m,
			Handler: func(_ any, ctx context.Context, dec func(any) error, _ grpc.UnaryServerInterceptor) (any, error) {
				if err := dec(new(emptypb.Empty)); err != nil {
					return nil, err
				}
				r.calls.Add(1)
				return new(emptypb.Empty), r.handle(ctx, m)
			}})
	}
	if stream != "" {
		desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: stream, ServerStreams: true,
			Handler: func(_ any, ss grpc.ServerStream) error {
				if err := ss.RecvMsg(new(emptypb.Empty)); err != nil {
					return err
				}
				r.calls.Add(1)
				if err := r.handle(ss.Context(), stream); err != nil {
					return err
				}
				return ss.SendMsg(new(emptypb.Empty))
			}})
	}
	return desc
}

const fakeMemory = "zen.memory.v1.MemoryService"

func startReplica(t *testing.T, handle func(context.Context, string) error) *replica {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &replica{addr: lis.Addr().String(), g: NewGRPC(), handle: handle}
	r.g.RegisterService(fakeZenService(fakeMemory, []string{"GetThread", "CreateThread"}, "ExportThreads", r), nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.g.Serve(ctx, countingListener{lis, &r.accept}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve %s: %v", r.addr, err)
		}
	})
	return r
}

func callFake(ctx context.Context, conn *grpc.ClientConn, method string) error {
	return conn.Invoke(ctx, "/"+fakeMemory+"/"+method, new(emptypb.Empty), new(emptypb.Empty))
}

func dialList(t *testing.T, replicas ...*replica) *grpc.ClientConn {
	t.Helper()
	addrs := make([]string, len(replicas))
	for i, r := range replicas {
		addrs[i] = r.addr
	}
	conn, err := Dial(strings.Join(addrs, ","))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func ok(context.Context, string) error { return nil }

// TestDialSpreadsCalls: calls over one connection go to every replica of a
// list in turn, not all to the first one (gRPC's default, pick_first).
func TestDialSpreadsCalls(t *testing.T) {
	t.Parallel()
	a, b := startReplica(t, ok), startReplica(t, ok)
	conn := dialList(t, a, b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// Until both are connected round_robin uses the ready one alone.
	waitUntil(t, ctx, "both replicas to get a call", func() bool {
		_ = callFake(ctx, conn, "GetThread")
		return a.calls.Load() > 0 && b.calls.Load() > 0
	})
	a0, b0 := a.calls.Load(), b.calls.Load()
	for range 100 {
		if err := callFake(ctx, conn, "GetThread"); err != nil {
			t.Fatal(err)
		}
	}
	if da, db := a.calls.Load()-a0, b.calls.Load()-b0; da != 50 || db != 50 {
		t.Errorf("100 calls went %d and %d to the two replicas, want 50 each", da, db)
	}
}

// TestRetriesOnlyIdempotentCalls: a replica that answers Unavailable costs
// a read nothing (the retry goes to the other replica), while a call that
// creates something is not tried twice.
func TestRetriesOnlyIdempotentCalls(t *testing.T) {
	t.Parallel()
	down := startReplica(t, func(context.Context, string) error { return grpcstatus.Error(codes.Unavailable, "draining") })
	up := startReplica(t, ok)
	conn := dialList(t, down, up)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	waitUntil(t, ctx, "both replicas to be connected", func() bool {
		_ = callFake(ctx, conn, "CreateThread") // never retried, so it spends none of the retry budget
		return down.calls.Load() > 0 && up.calls.Load() > 0
	})
	// Reads alone, fewer than the retry budget allows even if each one's
	// first attempt failed: from 20 tokens, 10 failures (and 0.1 back for
	// each success) leave 11, above the half (10) at which gRPC stops
	// retrying. So not one may fail.
	const reads = 10
	failedReads := 0
	for range reads {
		if callFake(ctx, conn, "GetThread") != nil {
			failedReads++
		}
	}
	// round_robin alternates between the two: half of these reach the
	// replica that answers Unavailable, and none is tried again.
	const creates = 10
	failedCreates := 0
	for range creates {
		if callFake(ctx, conn, "CreateThread") != nil {
			failedCreates++
		}
	}
	if failedReads != 0 || failedCreates != creates/2 {
		t.Errorf("with one replica answering Unavailable, %d of %d reads failed (want 0: retried) and %d of %d "+
			"creations (want %d: never retried)", failedReads, reads, failedCreates, creates, creates/2)
	}
}

// TestConnectionAgeSparesCallsInFlight: a server closes connections at
// their age, so clients dial again (and resolve again), but a call in
// flight, here a stream longer than the age, finishes within the grace.
func TestConnectionAgeSparesCallsInFlight(t *testing.T) {
	// Not parallel: it changes the connection age every server gets.
	age, grace := MaxConnectionAge, MaxConnectionAgeGrace
	MaxConnectionAge, MaxConnectionAgeGrace = 300*time.Millisecond, 10*time.Second
	t.Cleanup(func() { MaxConnectionAge, MaxConnectionAgeGrace = age, grace })
	slow := make(chan struct{})
	r := startReplica(t, func(ctx context.Context, method string) error {
		if method == "ExportThreads" {
			select {
			case <-slow:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		return nil
	})
	conn := dialList(t, r)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/"+fakeMemory+"/ExportThreads")
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.SendMsg(new(emptypb.Empty)); err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var unaryErr error
	wg.Go(func() {
		// Calls go on, over new connections, while the stream holds the old.
		for r.accept.Load() < 3 && ctx.Err() == nil {
			if err := callFake(ctx, conn, "GetThread"); err != nil {
				unaryErr = err
				return
			}
		}
	})
	wg.Wait()
	if unaryErr != nil || r.accept.Load() < 3 {
		t.Fatalf("calls while connections aged: %v; connections: %d", unaryErr, r.accept.Load())
	}
	close(slow)
	if err := stream.RecvMsg(new(emptypb.Empty)); err != nil {
		t.Errorf("a stream that outlived its connection's age failed: %v", err)
	}
}

// waitUntil polls cond until it holds or ctx ends.
func waitUntil(t *testing.T, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("waited for %s: %v", what, ctx.Err())
		case <-tick.C:
		}
	}
}
