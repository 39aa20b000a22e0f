package call

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestWhatIsKeptLapses: a value is there until it lapses, and not after.
func TestWhatIsKeptLapses(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		l := newLapsing[string, int](4, time.Minute)
		l.put("a", 1)
		time.Sleep(time.Minute - time.Nanosecond)
		if v, ok := l.get("a"); !ok || v != 1 {
			t.Errorf("just before it lapses: %d, %t; want 1, true", v, ok)
		}
		time.Sleep(time.Nanosecond)
		if v, ok := l.get("a"); ok {
			t.Errorf("once it lapsed: %d, %t; want nothing", v, ok)
		}
	})
}

// TestKeysFromClientsCannotGrowItWithoutBound: past its bound it starts
// again rather than grow, and its zero value keeps nothing.
func TestKeysFromClientsCannotGrowItWithoutBound(t *testing.T) {
	t.Parallel()
	l := newLapsing[string, int](8, time.Hour)
	for i := range 1000 {
		l.put(fmt.Sprint(i), i)
		if n := len(l.m); n > 8 {
			t.Fatalf("%d entries after %d puts, want at most 8", n, i+1)
		}
	}
	if v, ok := l.get("999"); !ok || v != 999 {
		t.Errorf("the newest entry: %d, %t", v, ok)
	}
	var none lapsing[string, int]
	none.put("a", 1)
	if _, ok := none.get("a"); ok {
		t.Error("the zero value kept an entry")
	}
}

// countingRouter resolves every name but "gone", counting the asks.
type countingRouter struct {
	routerv1.UnimplementedRouterServiceServer
	asked atomic.Int32
}

func (c *countingRouter) ResolveModel(_ context.Context, req *routerv1.ResolveModelRequest) (
	*routerv1.ResolveModelResponse, error) {
	c.asked.Add(1)
	if req.GetModel() == "gone" {
		return nil, status.Error(codes.NotFound, "not available")
	}
	return &routerv1.ResolveModelResponse{Model: &routerv1.Model{Name: req.GetModel(), ContextWindow: 1000}}, nil
}

func localRouter(t *testing.T, srv routerv1.RouterServiceServer) routerv1.RouterServiceClient {
	return routerv1.NewRouterServiceClient(inProcess(t, func(g *grpc.Server) {
		routerv1.RegisterRouterServiceServer(g, srv)
	}))
}

// TestAModelResolvedLatelyIsNotAskedForAgain: a call naming a model the
// router resolved lately (for the same category) asks it nothing; another
// category, or a name the router refused, is asked each time.
func TestAModelResolvedLatelyIsNotAskedForAgain(t *testing.T) {
	t.Parallel()
	router := &countingRouter{}
	r := NewRunner(Backends{Router: localRouter(t, router)}, nil, files.NewPolicy(files.Config{}),
		DefaultOutputTokens, nil)
	ctx := context.Background()
	for range 3 {
		if m, err := r.resolve(ctx, "flash", "FAST_RESPONSE"); err != nil || m.GetName() != "flash" {
			t.Fatalf("resolve flash: %v, %v", m, err)
		}
	}
	if _, err := r.resolve(ctx, "flash", "EXTENDED_REASONING"); err != nil {
		t.Fatal(err)
	}
	if n := router.asked.Load(); n != 2 {
		t.Errorf("the router was asked %d times for one name in two categories, want 2", n)
	}
	for range 2 {
		if _, err := r.resolve(ctx, "gone", "FAST_RESPONSE"); status.Code(err) != codes.NotFound {
			t.Fatalf("resolve gone: %v, want NotFound", err)
		}
	}
	if n := router.asked.Load(); n != 4 {
		t.Errorf("the router was asked %d times after two refusals, want 4: a refusal is not kept", n)
	}
}

// TestNamesTheRouterTrimsAlikeShareAResolution: the router trims a name
// before it resolves it, so the edge keeps one resolution for both.
func TestNamesTheRouterTrimsAlikeShareAResolution(t *testing.T) {
	t.Parallel()
	router := &countingRouter{}
	r := NewRunner(Backends{Router: localRouter(t, router)}, nil, files.NewPolicy(files.Config{}),
		DefaultOutputTokens, nil)
	for _, name := range []string{"flash", " flash\t"} {
		if _, err := r.resolve(context.Background(), name, "FAST_RESPONSE"); err != nil {
			t.Fatal(err)
		}
	}
	if n := router.asked.Load(); n != 1 {
		t.Errorf("the router was asked %d times, want once", n)
	}
}
