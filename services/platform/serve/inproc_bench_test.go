package serve

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// BenchmarkCall compares one call with a 1 KiB payload each way over
// loopback TCP (what zen serve dialled before), over an in-memory listener
// (zen stdio before), and Local, with the service token and tracing on.
//
//	go test -run '^$' -bench Call -benchmem ./services/platform/serve
func BenchmarkCall(b *testing.B) {
	srv := &fakeTest{
		unary: func(_ context.Context, req *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
			return &testgrpc.SimpleResponse{Payload: req.GetPayload()}, nil
		},
		stream: func(req *testgrpc.StreamingOutputCallRequest, s testgrpc.TestService_StreamingOutputCallServer) error {
			for range 10 {
				if err := s.Send(&testgrpc.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
					return err
				}
			}
			return nil
		},
	}
	g := NewGRPC(testToken.ServerOptions()...)
	testgrpc.RegisterTestServiceServer(g, srv)
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	mem := NewInProcess()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	go func() { _ = g.Serve(ctx, tcp) }()
	go func() { _ = g.Server.Serve(mem.Listener()) }()
	overTCP, err := Dial(tcp.Addr().String(), testToken.DialOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	defer overTCP.Close()
	overMem, err := mem.Dial(testToken.DialOptions()...)
	if err != nil {
		b.Fatal(err)
	}
	defer overMem.Close()
	payload := &testgrpc.Payload{Body: make([]byte, 1024)}
	for _, c := range []struct {
		name string
		conn grpc.ClientConnInterface
	}{{"tcp", overTCP}, {"bufconn", overMem}, {"local", g.Local(testToken)}} {
		client := testgrpc.NewTestServiceClient(c.conn)
		b.Run("unary/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := client.UnaryCall(ctx, &testgrpc.SimpleRequest{Payload: payload}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("stream-of-10/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				s, err := client.StreamingOutputCall(ctx, &testgrpc.StreamingOutputCallRequest{Payload: payload})
				if err != nil {
					b.Fatal(err)
				}
				for err == nil {
					_, err = s.Recv()
				}
			}
		})
	}
}
