package call

import (
	"testing"

	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
)

// inProcess serves what register registers on a real gRPC server in
// memory and returns a connection to it, dialled with opts; both end with
// the test.
func inProcess(t *testing.T, register func(*grpc.Server), opts ...grpc.DialOption) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer()
	register(srv)
	conn, stop, err := serve.NewInProcess().Serve(srv, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return conn
}
