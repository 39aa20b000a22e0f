package tools

import (
	"context"

	"github.com/zenmcp/zen/services/platform/origin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// fromRouter says where a failed router call failed. The router marks the
// failures of the model's provider itself; an Unavailable it did not mark
// is the connection to the router breaking (the router stopped, or cannot
// be reached), which gRPC words as "error reading from server: EOF" and
// the like: that is marked as the router's, so the edge names the router
// instead of passing those words on, or blaming the executor.
func fromRouter(ctx context.Context, err error) error {
	if ctx.Err() != nil || status.Code(err) != codes.Unavailable {
		return err
	}
	if reason, _ := origin.Of(err); reason != "" {
		return err
	}
	return origin.Error(codes.Unavailable, "the executor could not reach zen's router: "+status.Convert(err).Message(),
		origin.RouterUnavailable, nil)
}

// beyondExecutor tells a failure the edge words itself: one that came from
// the model's provider or from the router, marked with its origin.
func beyondExecutor(err error) bool {
	reason, _ := origin.Of(err)
	return reason != ""
}
