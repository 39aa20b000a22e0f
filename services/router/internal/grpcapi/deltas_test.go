package grpcapi_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/telemetry"
	"github.com/zenmcp/zen/services/router/internal/grpcapi"
)

// messages is what a Generate stream carried: "delta <text>" for each
// delta, then "done <content>".
func messages(t *testing.T, c routerv1.RouterServiceClient) []string {
	t.Helper()
	stream, err := c.Generate(context.Background(), &routerv1.GenerateRequest{Model: "llama3.2",
		Messages: []*routerv1.Message{{Role: "user", Content: "hello"}}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for {
		msg, err := stream.Recv()
		if err != nil {
			t.Fatalf("after %q: %v", got, err)
		}
		if done := msg.GetDone(); done != nil {
			return append(got, "done "+done.GetContent())
		}
		got = append(got, "delta "+msg.GetDelta())
	}
}

// deltaRouter is a router over fake whose deltas go out at most every
// every.
func deltaRouter(t *testing.T, fake *fakemodel.Server, every time.Duration) routerv1.RouterServiceClient {
	t.Helper()
	api := grpcapi.New(onlyProvider(t, "custom", "Custom API", fake), fastPolicy, slog.New(slog.DiscardHandler),
		telemetry.NewInstruments())
	api.SetDeltaEvery(every)
	return serveRouter(t, api)
}

// A reply that streams in faster than the delta interval reaches the
// caller as its final message alone: the executor only counts deltas for
// progress, and one gRPC message per provider chunk was most of what a
// short call cost the router.
func TestAFastReplyIsOneMessage(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "three little words"} })
	got := messages(t, deltaRouter(t, fake, time.Hour))
	if diff := cmp.Diff([]string{"done three little words"}, got); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
}

// Once the interval has passed, a delta carries everything that came
// since the last one, in order, and the deltas add up to the reply.
func TestDueDeltasCarryTheTextSinceTheLast(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "three little words"} })
	got := messages(t, deltaRouter(t, fake, 0))
	want := []string{"delta three ", "delta little ", "delta words", "done three little words"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stream (-want +got):\n%s", diff)
	}
}
