package serve

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/protobuf/testing/protocmp"
)

// A request sent with HandOver reaches a handler in process as the caller
// built it, not copied; without it, copied. Either way the handler reads
// what the network gives it, and across a network the option changes
// nothing.
func TestLocalTakesHandedOverRequests(t *testing.T) {
	t.Parallel()
	for _, handOver := range []bool{false, true} {
		got := make(chan *testgrpc.StreamingOutputCallRequest, 2)
		srv := &fakeTest{stream: func(req *testgrpc.StreamingOutputCallRequest,
			s testgrpc.TestService_StreamingOutputCallServer) error {
			got <- req
			return s.Send(&testgrpc.StreamingOutputCallResponse{Payload: req.GetPayload()})
		}}
		_, conns := bothWays(t, testToken, testToken, srv)
		for name, conn := range conns {
			var opts []grpc.CallOption
			if handOver {
				opts = append(opts, HandOver())
			}
			sent := &testgrpc.StreamingOutputCallRequest{Payload: body("history")}
			stream, err := testgrpc.NewTestServiceClient(conn).StreamingOutputCall(t.Context(), sent, opts...)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if _, err := stream.Recv(); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			received := <-got
			if diff := cmp.Diff(sent, received, protocmp.Transform()); diff != "" {
				t.Errorf("%s, hand-over %t: the handler read (-sent +received):\n%s", name, handOver, diff)
			}
			if same := received.GetPayload() == sent.GetPayload(); same != (handOver && name == "local") {
				t.Errorf("%s, hand-over %t: the handler got the caller's own payload: %t", name, handOver, same)
			}
		}
	}
}
