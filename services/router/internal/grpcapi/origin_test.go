package grpcapi_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestProviderFailuresCarryTheirOrigin: a failed model call says, in its
// status, that the provider failed, so that the executor and the edge that
// pass it on blame the provider and not themselves.
func TestProviderFailuresCarryTheirOrigin(t *testing.T) {
	t.Parallel()
	custom := map[string]string{origin.KeyProvider: "Custom API", origin.KeyModel: "llama3.2"}
	type marked struct {
		Code   codes.Code
		Origin origin.Reason
		Meta   map[string]string
	}
	tests := []struct {
		name  string
		reply fakemodel.Reply
		want  marked
	}{
		{"5xx", fakemodel.Reply{Status: 502}, marked{codes.Unavailable, origin.ProviderUnavailable, custom}},
		{"a refused request", fakemodel.Reply{Status: 400},
			marked{codes.FailedPrecondition, origin.ProviderError, custom}},
		{"past the deadline", fakemodel.Reply{Content: "late", Delay: 2 * time.Second},
			marked{codes.DeadlineExceeded, origin.ProviderTimeout, nil}},
		{"silent past the idle timeout", fakemodel.Reply{Stall: true},
			marked{codes.Unavailable, origin.ProviderTimeout, custom}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return tt.reply })
			deadline, idle := 300*time.Millisecond, 5*time.Second
			if tt.reply.Stall {
				deadline, idle = 5*time.Second, 100*time.Millisecond
			}
			router := impatientRouter(t, fake, deadline, idle)
			_, _, err := generate(context.Background(), router, &routerv1.GenerateRequest{
				Model: "llama3.2", Messages: []*routerv1.Message{{Role: "user", Content: "hi"}},
			})
			reason, meta := origin.Of(err)
			if diff := cmp.Diff(tt.want, marked{status.Code(err), reason, meta}); diff != "" {
				t.Errorf("status of %v (-want +got):\n%s", err, diff)
			}
		})
	}
}

// impatientRouter is newRouter with one attempt per call and the deadline
// and idle timeout given.
func impatientRouter(t *testing.T, fake *fakemodel.Server, deadline,
	idle time.Duration) routerv1.RouterServiceClient {
	t.Helper()
	reg := onlyProvider(t, "custom", "Custom API", fake)
	policy := fastPolicy
	policy.Attempts, policy.Deadline, policy.IdleTimeout = 1, deadline, idle
	return serveRouter(t, grpcapi.New(reg, policy, slog.New(slog.DiscardHandler), telemetry.NewInstruments()))
}
