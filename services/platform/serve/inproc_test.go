package serve

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
)

// fakeTest is grpc-go's interop test service, answering with its fields.
type fakeTest struct {
	testgrpc.UnimplementedTestServiceServer
	unary  func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error)
	stream func(*testgrpc.StreamingOutputCallRequest, testgrpc.TestService_StreamingOutputCallServer) error
}

func (f *fakeTest) UnaryCall(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return f.unary(ctx, req)
}

func (f *fakeTest) StreamingOutputCall(req *testgrpc.StreamingOutputCallRequest,
	s testgrpc.TestService_StreamingOutputCallServer) error {
	return f.stream(req, s)
}

var testToken = Security{token: "a-service-token-of-32-characters"}

// bothWays serves srv on a GRPC checked with server and returns the two
// ways a role calls it, presenting client's credential: over the network
// (real gRPC over HTTP/2, on an in-memory listener) and Local. Every test
// runs both and compares.
func bothWays(t *testing.T, server, client Security, srv testgrpc.TestServiceServer) (*GRPC,
	map[string]grpc.ClientConnInterface) {
	t.Helper()
	return serveBothWays(t, server, client, nil, func(g *GRPC) {
		testgrpc.RegisterTestServiceServer(g, srv)
		g.SetServing("grpc.testing.TestService")
	})
}

// serveBothWays is bothWays for the services register registers, with rec
// (when not nil) hearing both ends of every call on both ways in place of
// the tracing.
func serveBothWays(t *testing.T, server, client Security, rec stats.Handler, register func(*GRPC)) (*GRPC,
	map[string]grpc.ClientConnInterface) {
	t.Helper()
	opts, dialOpts := server.ServerOptions(), client.DialOptions()
	if rec != nil {
		opts = append(opts, grpc.StatsHandler(rec))
		dialOpts = append(dialOpts, grpc.WithStatsHandler(rec))
	}
	g := NewGRPC(opts...)
	register(g)
	lis := NewInProcess()
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, lis.Listener()) }()
	t.Cleanup(func() {
		stop()
		if err := <-served; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	remote, err := lis.Dial(dialOpts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = remote.Close() })
	local := g.Local(server)
	local.creds = client
	if rec != nil {
		local.clientStats, local.serverStats = rec, rec
	}
	return g, map[string]grpc.ClientConnInterface{"network": remote, "local": local}
}

// same fails unless the network and Local saw the same.
func same[T any](t *testing.T, got map[string]T) {
	t.Helper()
	if diff := cmp.Diff(got["network"], got["local"], protocmp.Transform()); diff != "" {
		t.Errorf("Local differs from the network (-network +local):\n%s", diff)
	}
}

// outcome of one unary call, as the client and the handler saw it.
type unaryOutcome struct {
	Code            codes.Code
	Message         string
	Reply           *testgrpc.SimpleResponse
	Header, Trailer metadata.MD
	Saw             map[string][]string // incoming metadata the handler saw
	Client          string              // auth.Client in the handler
	Leaked          any                 // a client context value the handler saw
}

type leakKey struct{}

func TestLocalUnaryAnswersAsTheNetwork(t *testing.T) {
	t.Parallel()
	sentinel := errors.New("a sentinel only the server knows")
	cases := []struct {
		name   string
		method string // default UnaryCall
		req    *testgrpc.SimpleRequest
		answer func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error)
	}{
		{name: "echo with metadata both ways", req: &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("hi")}},
			answer: func(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
				if err := grpc.SetHeader(ctx, metadata.Pairs("x-header", "h")); err != nil {
					return nil, err
				}
				if err := grpc.SetTrailer(ctx, metadata.Pairs("x-trailer", "t")); err != nil {
					return nil, err
				}
				method, _ := grpc.Method(ctx)
				return &testgrpc.SimpleResponse{Payload: req.GetPayload(), Username: method}, nil
			}},
		{name: "status error", answer: failWith(grpcstatus.Error(codes.NotFound, "no such thread"))},
		{name: "plain error is Unknown", answer: failWith(sentinel)},
		{name: "context error keeps its code", answer: failWith(context.DeadlineExceeded)},
		{name: "request that cannot be marshalled",
			req: &testgrpc.SimpleRequest{ResponseStatus: &testgrpc.EchoStatus{Message: "\xff"}}},
		{name: "unknown method", method: "/grpc.testing.TestService/NoSuchCall"},
		{name: "unknown service", method: "/zen.nothing.v1.NothingService/Get"},
		{name: "malformed method", method: "no-slashes"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var saw unaryOutcome
			srv := &fakeTest{unary: func(ctx context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
				md, _ := metadata.FromIncomingContext(ctx)
				saw.Saw = map[string][]string{"x-request": md["x-request"], "authorization": md["authorization"],
					"zen-client-id": md["zen-client-id"]}
				saw.Client, saw.Leaked = auth.Client(ctx), ctx.Value(leakKey{})
				if tc.answer == nil {
					return &testgrpc.SimpleResponse{}, nil
				}
				return tc.answer(ctx, req)
			}}
			_, conns := bothWays(t, testToken, testToken, srv)
			got := map[string]unaryOutcome{}
			for name, conn := range conns {
				saw = unaryOutcome{}
				ctx := metadata.AppendToOutgoingContext(t.Context(), "x-request", "r")
				ctx = context.WithValue(auth.WithClient(ctx, "alice"), leakKey{}, "client-side value")
				method := tc.method
				if method == "" {
					method = "/grpc.testing.TestService/UnaryCall"
				}
				req := tc.req
				if req == nil {
					req = &testgrpc.SimpleRequest{}
				}
				o := unaryOutcome{Reply: &testgrpc.SimpleResponse{}}
				err := conn.Invoke(ctx, method, req, o.Reply, grpc.Header(&o.Header), grpc.Trailer(&o.Trailer))
				if errors.Is(err, sentinel) {
					t.Errorf("%s: the client holds the server's error value", name)
				}
				st := grpcstatus.Convert(err)
				o.Code, o.Message = st.Code(), st.Message()
				o.Saw, o.Client, o.Leaked = saw.Saw, saw.Client, saw.Leaked
				o.Header, o.Trailer = only(o.Header, "x-header"), only(o.Trailer, "x-trailer")
				got[name] = o
			}
			same(t, got)
			if got["local"].Leaked != nil {
				t.Errorf("the handler saw the caller's context value %v", got["local"].Leaked)
			}
		})
	}
}

// failWith is a handler that fails with err.
func failWith(err error) func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) { return nil, err }
}

// only keeps the named keys: gRPC's transport adds its own to the rest.
func only(md metadata.MD, keys ...string) metadata.MD {
	out := metadata.MD{}
	for _, k := range keys {
		if v := md.Get(k); len(v) > 0 {
			out[k] = v
		}
	}
	return out
}

// The server's checks run in-process as on its port: a caller without the
// service token, or one naming a client to a role that has no token, is
// refused with the same status.
func TestLocalRefusesAsTheNetwork(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name           string
		server, client Security
		ctx            func(context.Context) context.Context
		want           codes.Code
	}{
		{name: "no service token", server: testToken, client: Security{}, want: codes.Unauthenticated},
		{name: "wrong service token", server: testToken, client: Security{token: strings.Repeat("x", 32)},
			want: codes.Unauthenticated},
		{name: "a client named to a role without a token", server: Security{}, client: Security{},
			ctx:  func(ctx context.Context) context.Context { return auth.WithClient(ctx, "alice") },
			want: codes.FailedPrecondition},
		{name: "the right token", server: testToken, client: testToken, want: codes.OK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			srv := &fakeTest{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
				return &testgrpc.SimpleResponse{}, nil
			}}
			_, conns := bothWays(t, tc.server, tc.client, srv)
			got := map[string]*grpcstatus.Status{}
			for name, conn := range conns {
				ctx := t.Context()
				if tc.ctx != nil {
					ctx = tc.ctx(ctx)
				}
				err := conn.Invoke(ctx, "/grpc.testing.TestService/UnaryCall", &testgrpc.SimpleRequest{},
					&testgrpc.SimpleResponse{})
				got[name] = grpcstatus.Convert(err)
				if got[name].Code() != tc.want {
					t.Errorf("%s: %v, want %v", name, err, tc.want)
				}
			}
			same(t, map[string]any{"network": got["network"].Proto(), "local": got["local"].Proto()})
		})
	}
}

// Neither side can change the other's messages: each holds its own copy,
// as across a network.
func TestLocalCopiesMessages(t *testing.T) {
	t.Parallel()
	var kept *testgrpc.SimpleResponse
	srv := &fakeTest{unary: func(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		req.GetPayload().Body[0] = 'X' // the handler scribbles on its request
		kept = &testgrpc.SimpleResponse{Payload: &testgrpc.Payload{Body: []byte("reply")}}
		return kept, nil
	}}
	g := NewGRPC()
	testgrpc.RegisterTestServiceServer(g, srv)
	req := &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: []byte("request")}}
	reply, err := testgrpc.NewTestServiceClient(g.Local(Security{})).UnaryCall(t.Context(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(req.GetPayload().GetBody()); got != "request" {
		t.Errorf("the caller's request became %q", got)
	}
	reply.GetPayload().Body[0] = 'X' // the caller scribbles on its reply
	if got := string(kept.GetPayload().GetBody()); got != "reply" {
		t.Errorf("the handler's reply became %q", got)
	}
}
