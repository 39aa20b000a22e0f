package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// sizeLimitService answers with a payload of the size the request asks
// for: by ResponseSize on UnaryCall, by its first ResponseParameters on
// StreamingOutputCall.
func sizeLimitService(big []byte) testgrpc.TestServiceServer {
	return inputTest{&fakeTest{
		unary: func(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
			return &testgrpc.SimpleResponse{Payload: &testgrpc.Payload{Body: big[:req.GetResponseSize()]}}, nil
		},
		stream: func(req *testgrpc.StreamingOutputCallRequest, s testgrpc.TestService_StreamingOutputCallServer) error {
			size := req.GetResponseParameters()[0].GetSize()
			return s.Send(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: big[:size]}})
		},
	}}
}

// A message over MaxMessageBytes is refused by its sender, whichever side
// sends it, with the code gRPC gives over a network; one at the limit
// passes.
func TestLocalEnforcesTheSizeLimit(t *testing.T) {
	t.Parallel()
	big := make([]byte, MaxMessageBytes) // a message around it is over the limit
	_, conns := bothWays(t, testToken, testToken, sizeLimitService(big))
	type refusal struct {
		Code    codes.Code
		Message string
	}
	// Each case returns the size of the message the limit refuses and the
	// call's error.
	cases := []struct {
		name string
		call func(context.Context, testgrpc.TestServiceClient) (int, error)
	}{
		{"unary request", func(ctx context.Context, c testgrpc.TestServiceClient) (int, error) {
			req := &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{Body: big}}
			_, err := c.UnaryCall(ctx, req)
			return proto.Size(req), err
		}},
		{"unary reply", func(ctx context.Context, c testgrpc.TestServiceClient) (int, error) {
			_, err := c.UnaryCall(ctx, &testgrpc.SimpleRequest{ResponseSize: int32(len(big))})
			return proto.Size(&testgrpc.SimpleResponse{Payload: &testgrpc.Payload{Body: big}}), err
		}},
		{"streamed request", func(ctx context.Context, c testgrpc.TestServiceClient) (int, error) {
			s, err := c.StreamingInputCall(ctx)
			if err != nil {
				return 0, err
			}
			req := &testgrpc.StreamingInputCallRequest{Payload: &testgrpc.Payload{Body: big}}
			return proto.Size(req), s.Send(req)
		}},
		{"streamed reply", func(ctx context.Context, c testgrpc.TestServiceClient) (int, error) {
			s, err := c.StreamingOutputCall(ctx, &testgrpc.StreamingOutputCallRequest{
				ResponseParameters: []*testgrpc.ResponseParameters{{Size: int32(len(big))}}})
			if err != nil {
				return 0, err
			}
			_, err = s.Recv()
			return proto.Size(&testgrpc.StreamingOutputCallResponse{Payload: &testgrpc.Payload{Body: big}}), err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			codes := map[string]codes.Code{}
			for name, conn := range conns {
				size, err := tc.call(t.Context(), testgrpc.NewTestServiceClient(conn))
				codes[name] = grpcstatus.Code(err)
				if name != "local" {
					continue
				}
				// The network's text lacks the "grpc: " Local has always put first.
				want := refusal{Code: 8, Message: fmt.Sprintf("grpc: trying to send message larger than max (%d vs. %d)",
					size, MaxMessageBytes)}
				st := grpcstatus.Convert(err)
				if diff := cmp.Diff(want, refusal{st.Code(), st.Message()}); diff != "" {
					t.Errorf("local refused with (-want +got):\n%s", diff)
				}
			}
			same(t, codes)
		})
	}

	// At the limit, a message passes.
	req := &testgrpc.SimpleRequest{Payload: &testgrpc.Payload{}}
	for n := MaxMessageBytes - 16; proto.Size(req) < MaxMessageBytes; n++ {
		req.Payload.Body = big[:n]
	}
	if proto.Size(req) != MaxMessageBytes {
		t.Fatalf("no request of exactly %d bytes: %d", MaxMessageBytes, proto.Size(req))
	}
	reply, err := testgrpc.NewTestServiceClient(conns["local"]).UnaryCall(t.Context(), req)
	if err != nil {
		t.Fatalf("a request of exactly MaxMessageBytes: %v", err)
	}
	if len(reply.GetPayload().GetBody()) != 0 {
		t.Errorf("the reply has %d bytes, want none", len(reply.GetPayload().GetBody()))
	}
}

// payloadRecorder is a stats handler that notes the size of each message
// a side sends or receives, and how many bytes framing added on the wire.
// Like zen's own handlers (notHealthCheck) it leaves out health checks: a
// network connection checks its server's health on its own (the service
// config's healthCheckConfig), whenever it connects.
type payloadRecorder struct {
	mu      sync.Mutex
	heard   []string
	framing map[int]int // WireLength - Length: how many messages had each
}

// healthRPC marks the context of a health check's RPC, which
// payloadRecorder leaves out.
type healthRPC struct{}

func (r *payloadRecorder) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	if !notHealthCheck(info) {
		return context.WithValue(ctx, healthRPC{}, true)
	}
	return ctx
}
func (r *payloadRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}
func (r *payloadRecorder) HandleConn(context.Context, stats.ConnStats) {}

func (r *payloadRecorder) HandleRPC(ctx context.Context, s stats.RPCStats) {
	if ctx.Value(healthRPC{}) != nil {
		return
	}
	var line string
	var framing int
	switch s := s.(type) {
	case *stats.OutPayload:
		line = fmt.Sprintf("sent %d of %d (%T)", s.Length, proto.Size(s.Payload.(proto.Message)), s.Payload)
		framing = s.WireLength - s.Length
	case *stats.InPayload:
		line = fmt.Sprintf("received %d of %d (%T)", s.Length, proto.Size(s.Payload.(proto.Message)), s.Payload)
		framing = s.WireLength - s.Length
	default:
		return
	}
	side := "server "
	if s.IsClient() {
		side = "client "
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.heard = append(r.heard, side+line)
	if r.framing == nil {
		r.framing = map[int]int{}
	}
	r.framing[framing]++
}

// take returns what r heard so far, the client's messages first, and
// forgets it. A server's event may follow its client's answer, so only
// each side's own are in order.
func (r *payloadRecorder) take() (heard []string, framing map[int]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, side := range []string{"client ", "server "} {
		for _, h := range r.heard {
			if strings.HasPrefix(h, side) {
				heard = append(heard, h)
			}
		}
	}
	framing = r.framing
	r.heard, r.framing = nil, nil
	return heard, framing
}

// The stats handlers hear each message with its size, as over a network;
// its WireLength is the same, where the network's adds its 5-byte frame
// header.
func TestLocalReportsMessageSizes(t *testing.T) {
	t.Parallel()
	rec := &payloadRecorder{}
	srv := duplexEcho{fakeTest: &fakeTest{
		unary: func(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
			return &testgrpc.SimpleResponse{Payload: req.GetPayload(), Username: "alice"}, nil
		}}, got: make(chan streamIsolation, 1)}
	_, conns := serveBothWays(t, testToken, testToken, rec, func(g *GRPC) { testgrpc.RegisterTestServiceServer(g, srv) })
	got := map[string][]string{}
	framing := map[string]map[int]int{}
	for name, conn := range conns {
		client := testgrpc.NewTestServiceClient(conn)
		if _, err := client.UnaryCall(t.Context(), &testgrpc.SimpleRequest{Payload: body("a request")}); err != nil {
			t.Fatal(err)
		}
		stream, err := client.FullDuplexCall(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&testgrpc.StreamingOutputCallRequest{Payload: body("a streamed request")}); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
		if err := stream.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); !errors.Is(err, io.EOF) {
			t.Fatalf("%s: the stream ended with %v", name, err)
		}
		<-srv.got // the handler has returned: its events are in
		got[name], framing[name] = rec.take()
	}
	same(t, got)
	want := []string{
		"client sent 13 of 13 (*grpc_testing.SimpleRequest)",
		"client received 20 of 20 (*grpc_testing.SimpleResponse)",
		"client sent 22 of 22 (*grpc_testing.StreamingOutputCallRequest)",
		"client received 9 of 9 (*grpc_testing.StreamingOutputCallResponse)",
		"server received 13 of 13 (*grpc_testing.SimpleRequest)",
		"server sent 20 of 20 (*grpc_testing.SimpleResponse)",
		"server received 22 of 22 (*grpc_testing.StreamingOutputCallRequest)",
		"server sent 9 of 9 (*grpc_testing.StreamingOutputCallResponse)",
	}
	if diff := cmp.Diff(want, got["local"]); diff != "" {
		t.Errorf("local: the stats handlers heard (-want +got):\n%s", diff)
	}
	wantFraming := map[string]map[int]int{"network": {5: 8}, "local": {0: 8}}
	if diff := cmp.Diff(wantFraming, framing); diff != "" {
		t.Errorf("WireLength - Length: how many messages had each (-want +got):\n%s", diff)
	}
}
