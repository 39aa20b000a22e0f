package tools

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"google.golang.org/grpc"
)

// pacedRouter streams its pieces a second apart, then the whole reply.
type pacedRouter struct {
	routerv1.UnimplementedRouterServiceServer
	pieces []string
}

func (p *pacedRouter) Generate(_ *routerv1.GenerateRequest,
	stream grpc.ServerStreamingServer[routerv1.GenerateResponse]) error {
	var all string
	for _, piece := range p.pieces {
		all += piece
		if err := stream.Send(&routerv1.GenerateResponse{Event: &routerv1.GenerateResponse_Delta{Delta: piece}}); err != nil {
			return err
		}
		time.Sleep(progressEvery) // the bubble's clock: no real wait
	}
	return stream.Send(&routerv1.GenerateResponse{Event: &routerv1.GenerateResponse_Done{Done: &routerv1.GenerateDone{
		Content: all, ModelName: "llama3.2", Provider: "custom"}}})
}

// TestProgressCountsTokensInWords: what a streaming model has said so far
// is counted in words that read right for one token and for many.
func TestProgressCountsTokensInWords(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A token is about four characters: progress comes at the second
		// piece (4 characters) and the third (8).
		env := newEnv(t, &pacedRouter{pieces: []string{"ab", "cd", "efgh"}})
		var got []string
		model := &routerv1.Model{Name: "llama3.2", Provider: "custom"}
		c := &Call{Model: model, Progress: func(msg string, _ int64) { got = append(got, msg) }}
		_, err := run(context.Background(), env, c, generation{model: model, user: "hi"})
		if err != nil {
			t.Fatal(err)
		}
		want := []string{"asking llama3.2 via custom", "llama3.2 is answering: about 1 token so far",
			"llama3.2 is answering: about 2 tokens so far"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("progress (-want +got):\n%s", diff)
		}
	})
}
