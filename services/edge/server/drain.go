package server

import (
	"context"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/serve"
)

// drainer lets a stdio session stop taking requests while the calls it
// runs finish and write their answers. The SDK's own ServerSession.Close
// cannot: once closing, it fails every write, the answers of the calls in
// flight included, and that failure cancels them.
type drainer struct {
	mu       sync.Mutex
	draining bool
	running  sync.WaitGroup
	// cut ends when draining has taken too long; the requests still
	// running are then cancelled, with serve.ErrStopping, and answer so.
	cut    context.Context
	cutNow context.CancelFunc
}

func newDrainer() *drainer {
	d := &drainer{}
	var cut context.CancelCauseFunc
	d.cut, cut = context.WithCancelCause(context.Background())
	d.cutNow = func() { cut(serve.ErrStopping) }
	return d
}

// errStopping answers a request that comes in while zen stops.
var errStopping = &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
	Message: "zen is shutting down and takes no new requests; start it again to go on"}

// middleware counts each request while it runs and refuses new ones once
// draining has begun. Notifications pass: a client may still cancel a call
// that is being drained.
func (d *drainer) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") {
			return next(ctx, method, req)
		}
		d.mu.Lock()
		if d.draining {
			d.mu.Unlock()
			return nil, errStopping
		}
		d.running.Add(1)
		d.mu.Unlock()
		defer d.running.Done()
		ctx, cancel := context.WithCancelCause(ctx)
		defer cancel(nil)
		defer context.AfterFunc(d.cut, func() { cancel(context.Cause(d.cut)) })()
		return next(ctx, method, req)
	}
}

// drain refuses new requests from now on and returns once those running
// have answered.
func (d *drainer) drain() {
	d.mu.Lock()
	d.draining = true
	d.mu.Unlock()
	d.running.Wait()
}
