package serve

import (
	"context"
	"errors"
	"io"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/metadata"
	grpcstatus "google.golang.org/grpc/status"
)

// streamOutcome is what a client read from a server stream.
type streamOutcome struct {
	Bodies          []string
	Code            codes.Code
	Message         string
	Header, Trailer metadata.MD
}

func TestLocalStreamsAsTheNetwork(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		sizes []int32
		code  codes.Code
	}{
		{name: "three messages", sizes: []int32{1, 2, 3}},
		{name: "two messages then an error", sizes: []int32{4, 5}, code: codes.FailedPrecondition},
		{name: "an error before any message", code: codes.NotFound},
		{name: "nothing at all"},
	}
	srv := &fakeTest{stream: func(req *testgrpc.StreamingOutputCallRequest,
		s testgrpc.TestService_StreamingOutputCallServer) error {
		if err := s.SetHeader(metadata.Pairs("x-header", "h")); err != nil {
			return err
		}
		s.SetTrailer(metadata.Pairs("x-trailer", "t"))
		for _, p := range req.GetResponseParameters() {
			body := make([]byte, p.GetSize())
			for i := range body {
				body[i] = 'a' + byte(p.GetSize())
			}
			if err := s.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: body}}); err != nil {
				return err
			}
		}
		if st := req.GetResponseStatus(); st != nil {
			return grpcstatus.Error(codes.Code(st.GetCode()), st.GetMessage())
		}
		return nil
	}}
	_, conns := bothWays(t, testToken, testToken, srv)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := &testgrpc.StreamingOutputCallRequest{}
			for _, n := range tc.sizes {
				req.ResponseParameters = append(req.ResponseParameters, &testgrpc.ResponseParameters{Size: n})
			}
			if tc.code != codes.OK {
				req.ResponseStatus = &testgrpc.EchoStatus{Code: int32(tc.code), Message: "refused"}
			}
			got := map[string]streamOutcome{}
			for name, conn := range conns {
				stream, err := testgrpc.NewTestServiceClient(conn).StreamingOutputCall(t.Context(), req)
				if err != nil {
					t.Fatal(err)
				}
				var o streamOutcome
				for {
					resp, err := stream.Recv()
					if err != nil {
						if !errors.Is(err, io.EOF) {
							st := grpcstatus.Convert(err)
							o.Code, o.Message = st.Code(), st.Message()
						}
						break
					}
					o.Bodies = append(o.Bodies, string(resp.GetPayload().GetBody()))
				}
				header, err := stream.Header()
				if err != nil {
					t.Errorf("%s: Header: %v", name, err)
				}
				o.Header, o.Trailer = only(header, "x-header"), only(stream.Trailer(), "x-trailer")
				got[name] = o
			}
			same(t, got)
			if len(got["local"].Bodies) != len(tc.sizes) || got["local"].Code != tc.code {
				t.Errorf("local read %+v", got["local"])
			}
		})
	}
}

// A client stream whose client sends several messages and then closes.
func TestLocalClientStreams(t *testing.T) {
	t.Parallel()
	g := NewGRPC()
	testgrpc.RegisterTestServiceServer(g, inputTest{&fakeTest{}})
	stream, err := testgrpc.NewTestServiceClient(g.Local(Security{})).StreamingInputCall(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{3, 4, 5} {
		req := &testgrpc.StreamingInputCallRequest{Payload: &testgrpc.Payload{Body: make([]byte, n)}}
		if err := stream.Send(req); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := stream.CloseAndRecv()
	if err != nil || resp.GetAggregatedPayloadSize() != 12 {
		t.Errorf("CloseAndRecv = %v, %v; want 12 bytes in all", resp, err)
	}
}

type inputTest struct{ *fakeTest }

func (inputTest) StreamingInputCall(s testgrpc.TestService_StreamingInputCallServer) error {
	var n int32
	for {
		req, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return s.SendAndClose(&testgrpc.StreamingInputCallResponse{AggregatedPayloadSize: n})
		}
		if err != nil {
			return err
		}
		n += int32(len(req.GetPayload().GetBody()))
	}
}

// A client that cancels mid-stream hears Canceled at once, and the handler
// sees its context end, as across a network.
func TestLocalCancelMidStream(t *testing.T) {
	t.Parallel()
	handlerSaw := make(chan error, 1)
	srv := &fakeTest{stream: func(_ *testgrpc.StreamingOutputCallRequest,
		s testgrpc.TestService_StreamingOutputCallServer) error {
		if err := s.Send(&testgrpc.StreamingOutputCallResponse{}); err != nil {
			return err
		}
		<-s.Context().Done()
		handlerSaw <- s.Context().Err()
		return s.Context().Err()
	}}
	_, conns := bothWays(t, testToken, testToken, srv)
	got := map[string][2]string{}
	for name, conn := range conns {
		ctx, cancel := context.WithCancel(t.Context())
		stream, err := testgrpc.NewTestServiceClient(conn).StreamingOutputCall(ctx, &testgrpc.StreamingOutputCallRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatalf("%s: first message: %v", name, err)
		}
		cancel()
		_, err = stream.Recv()
		got[name] = [2]string{grpcstatus.Code(err).String(), (<-handlerSaw).Error()}
	}
	same(t, got)
	if got["local"][0] != codes.Canceled.String() {
		t.Errorf("local: %v after cancel, want Canceled", got["local"])
	}
}

// The caller's deadline is the handler's, and ends the call with
// DeadlineExceeded on both sides.
func TestLocalDeadline(t *testing.T) {
	t.Parallel()
	type saw struct {
		Code        codes.Code
		HasDeadline bool
	}
	handlerSaw := make(chan error, 1)
	deadlines := make(chan bool, 1)
	srv := &fakeTest{unary: func(ctx context.Context, _ *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		_, ok := ctx.Deadline()
		deadlines <- ok
		<-ctx.Done()
		handlerSaw <- ctx.Err()
		return nil, ctx.Err()
	}}
	_, conns := bothWays(t, testToken, testToken, srv)
	got := map[string]saw{}
	for name, conn := range conns {
		ctx := newCuedDeadline(t)
		called := make(chan error, 1)
		go func() {
			_, err := testgrpc.NewTestServiceClient(conn).UnaryCall(ctx, &testgrpc.SimpleRequest{})
			called <- err
		}()
		hasDeadline := received(t, deadlines, name+": the handler")
		ctx.pass()
		got[name] = saw{Code: grpcstatus.Code(received(t, called, name+": the call")), HasDeadline: hasDeadline}
		// Over the network the client resets the stream, so the handler
		// sees a cancellation; in-process it is always the deadline.
		if herr := received(t, handlerSaw, name+": the handler's end"); name == "local" &&
			!errors.Is(herr, context.DeadlineExceeded) {
			t.Errorf("local: the handler saw %v, want its deadline", herr)
		}
	}
	same(t, got)
	if want := (saw{codes.DeadlineExceeded, true}); got["local"] != want {
		t.Errorf("local: %+v, want %+v", got["local"], want)
	}
}

// A caller returns at its deadline even from a handler that ignores its
// context, as a remote caller would; the handler finishes on its own.
func TestLocalCallerDoesNotWaitForTheHandler(t *testing.T) {
	t.Parallel()
	entered, release, finished := make(chan struct{}), make(chan struct{}), make(chan struct{})
	srv := &fakeTest{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		defer close(finished)
		close(entered)
		<-release
		return &testgrpc.SimpleResponse{}, nil
	}}
	g := NewGRPC()
	testgrpc.RegisterTestServiceServer(g, srv)
	ctx := newCuedDeadline(t)
	called := make(chan error, 1)
	go func() {
		_, err := testgrpc.NewTestServiceClient(g.Local(Security{})).UnaryCall(ctx, &testgrpc.SimpleRequest{})
		called <- err
	}()
	received(t, entered, "the handler's start")
	ctx.pass()
	if err := received(t, called, "the call"); grpcstatus.Code(err) != codes.DeadlineExceeded {
		t.Errorf("call = %v, want DeadlineExceeded", err)
	}
	close(release)
	received(t, finished, "the handler")
}

// cuedDeadline is a call's context with a deadline that passes when the
// test says (pass), once the call has reached its handler: a real timer
// short enough to keep the test quick could fire, on a loaded machine,
// before the call reached its handler, which then never ran. Its deadline
// is far off, so only pass ends the call; then Err is DeadlineExceeded, as
// when a timer fires.
type cuedDeadline struct {
	context.Context // the values; none end it
	at              time.Time
	done            chan struct{}
	once            sync.Once
}

// newCuedDeadline returns a cued deadline that passes, at the latest, when
// t ends: a test that fails before its cue leaves no call waiting an hour.
func newCuedDeadline(t *testing.T) *cuedDeadline {
	c := &cuedDeadline{Context: context.WithoutCancel(t.Context()), at: time.Now().Add(time.Hour),
		done: make(chan struct{})}
	t.Cleanup(c.pass)
	return c
}

// Deadline stays an hour off after pass, where a real deadline would be
// past: the transports read it when a call starts, before the cue.
func (c *cuedDeadline) Deadline() (time.Time, bool) { return c.at, true }
func (c *cuedDeadline) Done() <-chan struct{}       { return c.done }

func (c *cuedDeadline) Err() error {
	select {
	case <-c.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// pass lets the deadline pass.
func (c *cuedDeadline) pass() { c.once.Do(func() { close(c.done) }) }

// received waits for what ch gives, failing the test rather than hanging
// when it never comes (what names it).
func received[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: nothing after 30 s", what)
		var zero T
		return zero
	}
}

// Stopping the server ends health watches, refuses new in-process calls
// and waits for those in flight, as GracefulStop does on the port.
func TestServeDrainsLocalCalls(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	srv := &fakeTest{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
		close(entered)
		<-release
		return &testgrpc.SimpleResponse{}, nil
	}}
	g := NewGRPC(testToken.ServerOptions()...)
	testgrpc.RegisterTestServiceServer(g, srv)
	g.SetServing("grpc.testing.TestService")
	local := g.Local(testToken)
	ctx, stop := context.WithCancel(t.Context())
	served := make(chan error, 1)
	go func() { served <- g.Serve(ctx, nil) }()

	health := healthpb.NewHealthClient(local)
	if resp, err := health.Check(t.Context(), &healthpb.HealthCheckRequest{}); err != nil ||
		resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("Check = %v, %v; want SERVING", resp, err)
	}
	watch, err := health.Watch(t.Context(), &healthpb.HealthCheckRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := watch.Recv(); err != nil || resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		t.Fatalf("first watch answer: %v, %v; want SERVING", resp, err)
	}
	inFlight := make(chan error, 1)
	go func() {
		_, err := testgrpc.NewTestServiceClient(local).UnaryCall(t.Context(), &testgrpc.SimpleRequest{})
		inFlight <- err
	}()
	<-entered

	stop()
	for {
		_, err := watch.Recv()
		if err != nil {
			if grpcstatus.Code(err) != codes.Unavailable {
				t.Errorf("watch ended with %v, want Unavailable", err)
			}
			break
		}
	}
	_, err = testgrpc.NewTestServiceClient(local).UnaryCall(t.Context(), &testgrpc.SimpleRequest{})
	if grpcstatus.Code(err) != codes.Unavailable {
		t.Errorf("a new call while stopping = %v, want Unavailable", err)
	}
	select {
	case err := <-served:
		t.Fatalf("Serve returned (%v) with a call in flight", err)
	default:
	}
	close(release)
	if err := <-inFlight; err != nil {
		t.Errorf("the call in flight: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
}

var _ grpc.ClientConnInterface = (*Local)(nil)
