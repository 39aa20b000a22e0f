package tools

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// failed is what a failed call gave: a tool error's text, or a gRPC error
// with the origin it carries.
type failed struct {
	ToolError string
	Code      codes.Code
	Origin    origin.Reason
	Message   string
}

// TestFailuresBeyondTheExecutorReachTheEdgeMarked: a failure of the model's
// provider, or of the router itself, goes to the edge as a gRPC error that
// says where it came from, so the edge can name it (a router that died
// used to reach the user as "error reading from server: EOF", and a slow
// provider as the executor's timeout). The router's refusal of a request
// stays a tool error the agent can act on.
func TestFailuresBeyondTheExecutorReachTheEdgeMarked(t *testing.T) {
	t.Parallel()
	providerDown := origin.Error(codes.Unavailable, "Custom API error for model llama3.2: HTTP 503",
		origin.ProviderUnavailable, map[string]string{origin.KeyProvider: "Custom API"})
	slow := origin.Error(codes.DeadlineExceeded, "the model call ran out of time", origin.ProviderTimeout, nil)
	tests := []struct {
		name   string
		router error // nil: the router is gone
		want   failed
	}{
		{"provider failed", providerDown, failed{Code: codes.Unavailable, Origin: origin.ProviderUnavailable,
			Message: "Custom API error for model llama3.2: HTTP 503"}},
		{"provider too slow", slow, failed{Code: codes.DeadlineExceeded, Origin: origin.ProviderTimeout,
			Message: "the model call ran out of time"}},
		{"router gone", nil, failed{Code: codes.Unavailable, Origin: origin.RouterUnavailable,
			Message: "the executor could not reach zen's router: "}},
		{"router refuses the request", status.Error(codes.InvalidArgument, "model llama3.2 does not accept images"),
			failed{ToolError: "Error in chat: model llama3.2 does not accept images"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env := routerEnv(t, &fakeRouter{err: tt.router}, tt.router == nil)
			res, err := runChat(context.Background(), env, &Call{Args: map[string]any{"prompt": "x"},
				Model: &routerv1.Model{Name: "llama3.2"}})
			var got failed
			if err != nil {
				got.Code, got.Message = status.Code(err), status.Convert(err).Message()
				got.Origin, _ = origin.Of(err)
				if tt.want.Origin == origin.RouterUnavailable {
					got.Message = got.Message[:min(len(got.Message), len(tt.want.Message))] // gRPC's words follow
				}
			} else {
				got.ToolError = decodeReply(t, res).Content
				if len(res.GetTurns()) != 0 {
					t.Error("a failed call stored turns")
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("runChat (-want +got):\n%s", diff)
			}
		})
	}
}

// routerEnv is newEnv, with the router stopped before the call when gone.
func routerEnv(t *testing.T, f *fakeRouter, gone bool) *Env {
	lis := serve.NewInProcess()
	srv := grpc.NewServer()
	routerv1.RegisterRouterServiceServer(srv, f)
	go func() { _ = srv.Serve(lis.Listener()) }()
	conn, err := lis.Dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if gone {
		srv.Stop()
	} else {
		t.Cleanup(srv.Stop)
	}
	return &Env{Router: routerv1.NewRouterServiceClient(conn)}
}
