package grpcapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/executor/internal/tools"
	"github.com/zenmcp/zen/services/platform/secrets"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestProgressGoesOnlyToCallersThatWantIt: a chat call sends its progress
// ("asking ... via ...") and then its result; one whose caller reports no
// progress (no_progress) gets the result alone, a message fewer to send,
// copy and wake the caller for.
func TestProgressGoesOnlyToCallersThatWantIt(t *testing.T) {
	t.Parallel()
	router := serveOne(t, func(s *grpc.Server) { routerv1.RegisterRouterServiceServer(s, answeringRouter{}) })
	env := &tools.Env{Router: routerv1.NewRouterServiceClient(router)}
	executor := executorv1.NewExecutorServiceClient(serveOne(t, func(s *grpc.Server) {
		executorv1.RegisterExecutorServiceServer(s, New(env, secrets.New(), slog.New(slog.DiscardHandler)))
	}))
	args, err := structpb.NewStruct(map[string]any{"prompt": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	for _, quiet := range []bool{false, true} {
		stream, err := executor.ExecuteTool(context.Background(), &executorv1.ExecuteToolRequest{ToolName: "chat",
			Arguments: args, Model: &routerv1.Model{Name: "llama3.2"}, NoProgress: quiet})
		if err != nil {
			t.Fatal(err)
		}
		progress, results := 0, 0
		for {
			msg, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("no_progress=%t: %v", quiet, err)
			}
			if msg.GetProgress() != nil {
				progress++
			}
			if msg.GetResult() != nil {
				results++
			}
		}
		if results != 1 || quiet != (progress == 0) {
			t.Errorf("no_progress=%t: %d progress messages and %d results", quiet, progress, results)
		}
	}
}
