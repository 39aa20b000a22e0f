package tools

import (
	"context"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"google.golang.org/grpc"
)

// endsSeen counts the streams a client read to their end (io.EOF).
type endsSeen struct{ n atomic.Int32 }

func (e *endsSeen) intercept(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string,
	streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	s, err := streamer(ctx, desc, cc, method, opts...)
	return &endWatch{ClientStream: s, seen: e}, err
}

type endWatch struct {
	grpc.ClientStream
	seen *endsSeen
}

func (w *endWatch) RecvMsg(m any) error {
	err := w.ClientStream.RecvMsg(m)
	if errors.Is(err, io.EOF) {
		w.seen.n.Add(1)
	}
	return err
}

// TestAModelCallReadsItsStreamToTheEnd: once the router's reply is whole,
// the executor still reads the stream's end, so that the call ends (its
// span, its stream) when the router's handler does, not when the tool's
// own call does.
func TestAModelCallReadsItsStreamToTheEnd(t *testing.T) {
	t.Parallel()
	var ends endsSeen
	env := newEnv(t, &fakeRouter{reply: "an answer"}, grpc.WithStreamInterceptor(ends.intercept))
	res, err := runChat(context.Background(), env, &Call{Args: map[string]any{"prompt": "why?"},
		Model: &routerv1.Model{Name: "llama3.2"}, RemainingTurns: 48})
	if err != nil || res.GetIsError() {
		t.Fatalf("runChat: %v %v", err, res)
	}
	if got := ends.n.Load(); got != 1 {
		t.Errorf("%d of 1 Generate streams read to their end", got)
	}
}
