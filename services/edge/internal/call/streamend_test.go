package call

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"sync/atomic"
	"testing"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// answeringExecutor answers every call with one result, and keeps the
// requests it got.
type answeringExecutor struct {
	executorv1.UnimplementedExecutorServiceServer
	got chan *executorv1.ExecuteToolRequest // buffered; nil keeps none
}

func (e answeringExecutor) ExecuteTool(req *executorv1.ExecuteToolRequest,
	stream grpc.ServerStreamingServer[executorv1.ExecuteToolResponse]) error {
	if e.got != nil {
		e.got <- req
	}
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

// localExecutor serves e in process, dialled with opts.
func localExecutor(t *testing.T, e answeringExecutor, opts ...grpc.DialOption) executorv1.ExecutorServiceClient {
	return executorv1.NewExecutorServiceClient(inProcess(t, func(g *grpc.Server) {
		executorv1.RegisterExecutorServiceServer(g, e)
	}, opts...))
}

// TestAToolCallReadsItsStreamToTheEnd: once the executor's result is in,
// the edge still reads the stream's end, so that the call to the executor
// ends (its span, its stream) with the executor's handler, not when the
// client's request does.
func TestAToolCallReadsItsStreamToTheEnd(t *testing.T) {
	t.Parallel()
	var seen ends
	r := &Runner{b: Backends{Executor: localExecutor(t, answeringExecutor{}, grpc.WithStreamInterceptor(seen.intercept))}}
	res, err := r.execute(context.Background(), &executorv1.ExecuteToolRequest{ToolName: "chat"}, nil)
	if err != nil || res == nil {
		t.Fatalf("execute: %v, %v", res, err)
	}
	if got := seen.n.Load(); got != 1 {
		t.Errorf("%d of 1 ExecuteTool streams read to their end", got)
	}
}

// TestOnlyACallThatWantsProgressIsSentIt: a client that gave no progress
// token hears no progress, so the executor is told to send none
// (no_progress); one that gave a token hears it.
func TestOnlyACallThatWantsProgressIsSentIt(t *testing.T) {
	t.Parallel()
	got := make(chan *executorv1.ExecuteToolRequest, 2)
	exec := localExecutor(t, answeringExecutor{got: got})
	schema, err := structpb.NewStruct(map[string]any{"type": "object"})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := NewTool(&executorv1.Tool{Name: "listmodels", InputSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	r := NewRunner(Backends{Executor: exec}, []*Tool{tool}, files.NewPolicy(files.Config{}), DefaultOutputTokens,
		slog.New(slog.DiscardHandler))
	for _, progress := range []func(string){nil, func(string) {}} {
		if _, err := r.Run(context.Background(), "listmodels", json.RawMessage(`{}`), progress); err != nil {
			t.Fatal(err)
		}
		if req := <-got; req.GetNoProgress() != (progress == nil) {
			t.Errorf("progress wanted %t: no_progress = %t", progress != nil, req.GetNoProgress())
		}
	}
}
