package call

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
)

// answeringExecutor answers every call with one result.
type answeringExecutor struct {
	executorv1.UnimplementedExecutorServiceServer
}

func (answeringExecutor) ExecuteTool(_ *executorv1.ExecuteToolRequest,
	stream grpc.ServerStreamingServer[executorv1.ExecuteToolResponse]) error {
	return stream.Send(&executorv1.ExecuteToolResponse{Event: &executorv1.ExecuteToolResponse_Result{
		Result: &executorv1.ToolResult{Reply: []byte(`{"status":"success","content":"a"}`)}}})
}

// ends counts the streams a client read to their end (io.EOF).
type ends struct{ n atomic.Int32 }

func (e *ends) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	return &endWatch{ClientStream: s, ends: e}, err
}

type endWatch struct {
	grpc.ClientStream
	ends *ends
}

func (w *endWatch) RecvMsg(m any) error {
	err := w.ClientStream.RecvMsg(m)
	if errors.Is(err, io.EOF) {
		w.ends.n.Add(1)
	}
	return err
}

// TestAToolCallReadsItsStreamToTheEnd: once the executor's result is in,
// the edge still reads the stream's end, so that the call to the executor
// ends (its span, its stream) with the executor's handler, not when the
// client's request does.
func TestAToolCallReadsItsStreamToTheEnd(t *testing.T) {
	t.Parallel()
	lis := serve.NewInProcess()
	srv := grpc.NewServer()
	executorv1.RegisterExecutorServiceServer(srv, answeringExecutor{})
	go func() { _ = srv.Serve(lis.Listener()) }()
	t.Cleanup(srv.Stop)
	var seen ends
	conn, err := lis.Dial(grpc.WithStreamInterceptor(seen.intercept))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	r := &Runner{b: Backends{Executor: executorv1.NewExecutorServiceClient(conn)}}
	res, err := r.execute(context.Background(), &executorv1.ExecuteToolRequest{ToolName: "chat"}, nil)
	if err != nil || res == nil {
		t.Fatalf("execute: %v, %v", res, err)
	}
	if got := seen.n.Load(); got != 1 {
		t.Errorf("%d of 1 ExecuteTool streams read to their end", got)
	}
}
