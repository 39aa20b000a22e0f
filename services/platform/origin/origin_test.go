package origin

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

func TestOriginSurvivesWrappingAndTheWire(t *testing.T) {
	t.Parallel()
	err := Error(codes.Unavailable, "HTTP 503", ProviderUnavailable, map[string]string{KeyProvider: "OpenAI"})
	// What a gRPC hop does: the status as proto, rebuilt on the other side.
	rebuilt := status.ErrorProto(status.Convert(err).Proto())
	cases := map[string]error{"as made": err, "wrapped": fmt.Errorf("call: %w", err), "over the wire": rebuilt}
	for name, e := range cases {
		reason, meta := Of(e)
		if diff := cmp.Diff(ProviderUnavailable, reason); diff != "" {
			t.Errorf("%s: reason (-want +got):\n%s", name, diff)
		}
		if diff := cmp.Diff(map[string]string{KeyProvider: "OpenAI"}, meta); diff != "" {
			t.Errorf("%s: metadata (-want +got):\n%s", name, diff)
		}
	}
	for _, e := range []error{nil, errors.New("plain"), status.Error(codes.Unavailable, "connection refused")} {
		if reason, _ := Of(e); reason != "" {
			t.Errorf("Of(%v) = %q, want none", e, reason)
		}
	}
}
