package serve

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// BenchmarkCall compares one call with a 1 KiB payload each way, and one
// with a 50-turn history each way, over loopback TCP (what zen serve
// dialled before), over an in-memory listener (zen stdio before), and
// Local, with the service token and tracing on.
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
	g.RegisterService(&historyDesc, nil)
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
	thread := history(50)
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
		b.Run("history-50/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			reply := &testgrpc.LoadBalancerStatsResponse{}
			for b.Loop() {
				if err := c.conn.Invoke(ctx, historyEcho, thread, reply); err != nil {
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

// historyEcho answers with the message it is sent: a history, one way and
// back, as memory answers the edge and the edge calls the executor.
const historyEcho = "/zen.serve.test.History/Echo"

var historyDesc = grpc.ServiceDesc{
	ServiceName: "zen.serve.test.History",
	HandlerType: (*any)(nil),
	Methods: []grpc.MethodDesc{{MethodName: "Echo", Handler: func(_ any, _ context.Context, dec func(any) error,
		_ grpc.UnaryServerInterceptor) (any, error) {
		m := &testgrpc.LoadBalancerStatsResponse{}
		return m, dec(m)
	}}},
}

// history is a message shaped like the history of a continued chat, as
// memory's PrepareCall answers it: per turn a role, its text, the tool,
// provider and model, a time and a little model metadata, all strings in
// small nested messages. The text is that of the benchmarks' short turns.
func history(turns int) *testgrpc.LoadBalancerStatsResponse {
	type entry = testgrpc.LoadBalancerStatsResponse_MetadataEntry
	h := &testgrpc.LoadBalancerStatsResponse_MetadataByPeer{}
	for i := range turns {
		role, text := "user", fmt.Sprint("Turn ", i/2+1, " of a conversation about call paths.")
		if i%2 == 1 {
			role, text = "assistant", strings.Repeat("An answer about call paths, from the model. ", 6)
		}
		h.RpcMetadata = append(h.RpcMetadata, &testgrpc.LoadBalancerStatsResponse_RpcMetadata{Metadata: []*entry{
			{Key: "role", Value: role},
			{Key: "content", Value: text},
			{Key: "tool_name", Value: "chat"},
			{Key: "model_provider", Value: "custom"},
			{Key: "model_name", Value: "llama3.2"},
			{Key: "timestamp", Value: "2026-05-04T11:05:08.123456Z"},
			{Key: "finish_reason", Value: "stop"},
			{Key: "usage", Value: `{"input_tokens":1234,"output_tokens":56}`},
		}})
	}
	return &testgrpc.LoadBalancerStatsResponse{
		MetadatasByPeer: map[string]*testgrpc.LoadBalancerStatsResponse_MetadataByPeer{"thread": h},
		RpcsByPeer:      map[string]int32{"turns": int32(turns)},
	}
}
