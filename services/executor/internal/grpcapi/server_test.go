package grpcapi

import (
	"context"
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/executor/internal/tools"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/secrets"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// failingRouter fails every model call with err.
type failingRouter struct {
	routerv1.UnimplementedRouterServiceServer
	err error
}

func (f failingRouter) Generate(*routerv1.GenerateRequest,
	grpc.ServerStreamingServer[routerv1.GenerateResponse]) error {
	return f.err
}

// TestAFailureKeepsItsOriginAcrossTheExecutor: a provider failure the
// executor passes on still says, at the edge, that it came from the
// provider, and its words are scrubbed of zen's secrets like any other.
func TestAFailureKeepsItsOriginAcrossTheExecutor(t *testing.T) {
	t.Parallel()
	routerErr := origin.Error(codes.Unavailable, "Custom API error: HTTP 401: key sk-secret refused",
		origin.ProviderUnavailable, map[string]string{origin.KeyProvider: "Custom API"})
	router := serveOne(t, func(s *grpc.Server) {
		routerv1.RegisterRouterServiceServer(s, failingRouter{err: routerErr})
	})
	env := &tools.Env{Router: routerv1.NewRouterServiceClient(router)}
	executor := serveOne(t, func(s *grpc.Server) {
		executorv1.RegisterExecutorServiceServer(s, New(env, secrets.New("sk-secret"), slog.New(slog.DiscardHandler)))
	})
	args, err := structpb.NewStruct(map[string]any{"prompt": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := executorv1.NewExecutorServiceClient(executor).ExecuteTool(context.Background(),
		&executorv1.ExecuteToolRequest{ToolName: "chat", Arguments: args, Model: &routerv1.Model{Name: "llama3.2"}})
	if err != nil {
		t.Fatal(err)
	}
	for err == nil {
		_, err = stream.Recv()
	}
	type seen struct {
		Code    codes.Code
		Message string
		Origin  origin.Reason
		Meta    map[string]string
	}
	got := seen{Code: status.Code(err), Message: status.Convert(err).Message()}
	got.Origin, got.Meta = origin.Of(err)
	want := seen{codes.Unavailable, "Custom API error: HTTP 401: key [redacted] refused",
		origin.ProviderUnavailable, map[string]string{origin.KeyProvider: "Custom API"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the executor's failure (-want +got):\n%s", diff)
	}
}

// serveOne serves what register registers over an in-memory listener.
func serveOne(t *testing.T, register func(*grpc.Server)) *grpc.ClientConn {
	t.Helper()
	srv := grpc.NewServer()
	register(srv)
	conn, stop, err := serve.NewInProcess().Serve(srv)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return conn
}

// answeringRouter answers every model call with the same reply.
type answeringRouter struct {
	routerv1.UnimplementedRouterServiceServer
}

func (answeringRouter) Generate(_ *routerv1.GenerateRequest,
	stream grpc.ServerStreamingServer[routerv1.GenerateResponse]) error {
	return stream.Send(&routerv1.GenerateResponse{Event: &routerv1.GenerateResponse_Done{Done: &routerv1.GenerateDone{
		Content: "an answer", ModelName: "llama3.2", Provider: "custom",
		Usage: &routerv1.Usage{InputTokens: 120, OutputTokens: 7, TotalTokens: 127},
	}}})
}

// The result says what the tool's model calls used, for the edge's log
// line of the call.
func TestResultCarriesModelUsage(t *testing.T) {
	t.Parallel()
	router := serveOne(t, func(s *grpc.Server) { routerv1.RegisterRouterServiceServer(s, answeringRouter{}) })
	env := &tools.Env{Router: routerv1.NewRouterServiceClient(router)}
	executor := serveOne(t, func(s *grpc.Server) {
		executorv1.RegisterExecutorServiceServer(s, New(env, secrets.New(), slog.New(slog.DiscardHandler)))
	})
	args, err := structpb.NewStruct(map[string]any{"prompt": "hi"})
	if err != nil {
		t.Fatal(err)
	}
	stream, err := executorv1.NewExecutorServiceClient(executor).ExecuteTool(context.Background(),
		&executorv1.ExecuteToolRequest{ToolName: "chat", Arguments: args, Model: &routerv1.Model{Name: "llama3.2"}})
	if err != nil {
		t.Fatal(err)
	}
	var got *executorv1.ModelUsage
	for {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatalf("no result: %v", err)
		}
		if res := msg.GetResult(); res != nil {
			got = res.GetUsage()
			break
		}
	}
	want := &executorv1.ModelUsage{Model: "llama3.2", Provider: "custom", InputTokens: 120, OutputTokens: 7}
	if diff := cmp.Diff(want, got, protocmp.Transform()); diff != "" {
		t.Errorf("the result's usage (-want +got):\n%s", diff)
	}
}
