package serve

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	testgrpc "google.golang.org/grpc/interop/grpc_testing"
)

// freshTest is fakeTest naming UnaryCall's replies fresh; its
// CacheableUnaryCall answers with the message it keeps in cached.
type freshTest struct {
	*fakeTest
	cached *testgrpc.SimpleResponse
}

func (freshTest) FreshReplies() []string { return []string{"UnaryCall"} }

func (f freshTest) CacheableUnaryCall(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
	return f.cached, nil
}

// A fresh reply (FreshReplies) reaches a caller in process as the handler
// built it, not copied; any other is copied. Either way the caller reads
// what the network gives it.
func TestLocalHandsOverFreshReplies(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		fresh  bool
		server func(*fakeTest) testgrpc.TestServiceServer
	}{
		{"fresh", true, func(f *fakeTest) testgrpc.TestServiceServer {
			return freshTest{f, &testgrpc.SimpleResponse{Payload: body("kept")}}
		}},
		{"not fresh", false, func(f *fakeTest) testgrpc.TestServiceServer { return f }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var built *testgrpc.Payload
			srv := &fakeTest{unary: func(context.Context, *testgrpc.SimpleRequest) (*testgrpc.SimpleResponse, error) {
				built = body("reply")
				return &testgrpc.SimpleResponse{Payload: built, Username: "alice"}, nil
			}}
			server := tc.server(srv)
			_, conns := bothWays(t, testToken, testToken, server)
			got := map[string]isolation{}
			for name, conn := range conns {
				// OauthScope is one the handler leaves unset: a reply moved
				// into the caller's message replaces all of it, as a copy does.
				reply := &testgrpc.SimpleResponse{Username: "overwritten", OauthScope: "stale"}
				err := conn.Invoke(t.Context(), "/grpc.testing.TestService/UnaryCall", &testgrpc.SimpleRequest{}, reply)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				got[name] = isolation{ClientReply: reply}
				if name == "local" && (reply.GetPayload() == built) != tc.fresh {
					t.Errorf("the caller holds the handler's own payload: %v, want %v", !tc.fresh, tc.fresh)
				}
			}
			same(t, got)
			want := &testgrpc.SimpleResponse{Payload: body("reply"), Username: "alice"}
			if diff := cmp.Diff(want, got["local"].ClientReply, cmpProto); diff != "" {
				t.Errorf("reply (-want +got):\n%s", diff)
			}
			if f, ok := server.(freshTest); ok {
				// A method the service does not name is copied, even when
				// another of its methods is fresh.
				reply := &testgrpc.SimpleResponse{}
				err := conns["local"].Invoke(t.Context(), "/grpc.testing.TestService/CacheableUnaryCall",
					&testgrpc.SimpleRequest{}, reply)
				if err != nil {
					t.Fatal(err)
				}
				if reply.GetPayload() == f.cached.GetPayload() {
					t.Error("CacheableUnaryCall's reply reached the caller uncopied")
				}
			}
		})
	}
}

// namesStream names, as fresh, a method that is not one of its unary ones.
type namesStream struct{ *fakeTest }

func (namesStream) FreshReplies() []string { return []string{"StreamingOutputCall"} }

// A service that names as fresh what is not one of its unary methods is a
// mistake found when it registers, not an optimisation silently lost.
func TestFreshRepliesNameUnaryMethods(t *testing.T) {
	t.Parallel()
	g := NewGRPC()
	t.Cleanup(g.Server.Stop)
	defer func() {
		if msg := fmt.Sprint(recover()); !strings.Contains(msg, `"StreamingOutputCall"`) {
			t.Errorf("registering a service that names a streaming method fresh: panic %q, want one naming it", msg)
		}
	}()
	testgrpc.RegisterTestServiceServer(g, namesStream{&fakeTest{}})
}
