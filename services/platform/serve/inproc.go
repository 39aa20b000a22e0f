package serve

import (
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// Local is a connection to a GRPC's own services from inside its process.
// A call runs the service's handler directly: no listener, socket, HTTP/2
// framing or flow control. Everything a call from another process goes
// through still happens, in the same order, so traces, metrics and
// refusals are those of a cluster: the client's identity forwarding (auth)
// and service token, the client's and the server's stats handlers
// (rpcstats.go: a client span and a server span per call), the server's
// checks (Security), and the health service. Each side receives a deep
// copy of its own (inproc_copy.go), so neither can change what the other
// holds, and size limits, invalid UTF-8 and unset required fields fail as
// marshalling fails them over a network. The handler runs in a goroutine
// of its own (one kept from earlier calls: inproc_workers.go) with the
// caller's deadline and cancellation but none of the caller's context
// values, so a caller that gives up returns at once, as it would from a
// remote call. The exceptions to the copies: a reply its service names
// fresh (FreshReplies) is handed to the caller, as no one else holds it,
// and a streamed request its caller hands over (HandOver) to the handler.
type Local struct {
	reg                      *registry
	checks                   Security // the server's side: what g's port checks calls with
	creds                    Security // the client's side: the token it presents
	clientStats, serverStats stats.Handler
}

// Local returns a connection to g's services that checks calls with sec,
// which should be the Security whose ServerOptions g was built with: it is
// what g's port checks them with.
func (g *GRPC) Local(sec Security) *Local {
	return &Local{reg: g.local, checks: sec, creds: sec, clientStats: clientStats(), serverStats: serverStats()}
}

// Invoke makes a unary call (grpc.ClientConnInterface).
func (l *Local) Invoke(ctx context.Context, method string, req, reply any, opts ...grpc.CallOption) error {
	return auth.UnaryClientInterceptor(ctx, method, req, reply, nil, l.invoke, opts...)
}

// NewStream starts a streaming call (grpc.ClientConnInterface).
func (l *Local) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string,
	opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return auth.StreamClientInterceptor(ctx, desc, nil, method, l.newStream, opts...)
}

// unaryResult is how a unary call ended.
type unaryResult struct {
	err             error // a status error
	header, trailer metadata.MD
	replySize       int
	replyErr        error // the reply did not fit the caller's message
}

func (l *Local) invoke(ctx context.Context, method string, req, reply any, _ *grpc.ClientConn,
	opts ...grpc.CallOption) (err error) {
	c := l.begin(ctx, method, opts, false, false)
	defer func() { c.end(err) }()
	if err := ctx.Err(); err != nil {
		return grpcstatus.FromContextError(err).Err()
	}
	out, size, err := sendable(req)
	if err != nil {
		return err
	}
	l.clientStats.HandleRPC(c.ctx, &stats.OutPayload{Client: true, Payload: req, Length: size,
		WireLength: size, SentTime: time.Now()})
	h, release, err := l.reg.enter(method)
	if err == nil && h.unary == nil {
		release()
		err = grpcstatus.Errorf(codes.Unimplemented, "in-process: %s streams; call it with NewStream", method)
	}
	if err != nil {
		return err
	}
	s := l.accept(c, release)
	x := &exchange{req: out, reqSize: size, reply: reply}
	done := make(chan unaryResult, 1) // the handler may finish after the caller left
	handlerWorkers.run(func() { done <- s.unary(h, x) })
	select {
	case r := <-done:
		c.header, c.trailer = r.header, r.trailer
		if r.err != nil {
			return r.err
		}
		if r.replyErr != nil {
			return r.replyErr
		}
		l.clientStats.HandleRPC(c.ctx, &stats.InPayload{Client: true, Payload: reply, Length: r.replySize,
			WireLength: r.replySize, RecvTime: time.Now()})
		return nil
	case <-c.ctx.Done():
		err := grpcstatus.FromContextError(c.ctx.Err()).Err()
		x.leave(err)
		return err
	}
}

// exchange holds a unary call's messages, which its handler's side copies
// in place: the request into the handler's message, the reply into the
// caller's, while the caller waits for its answer. Once the caller has
// left, its messages are its own again.
type exchange struct {
	mu      sync.Mutex
	req     proto.Message
	reqSize int
	reply   any
	read    bool  // the handler has read the request
	left    error // the caller's status once it has left
}

// readRequest copies the request into m, once, as the handler's stream
// gives it from the network: a second read is the end of the stream, and
// one after the caller left fails with the caller's status.
func (x *exchange) readRequest(m any) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.left != nil:
		return x.left
	case x.read:
		return io.EOF
	}
	x.read = true
	if err := copyInto(m, x.req); err != nil {
		return grpcstatus.Errorf(codes.Internal, "grpc: error unmarshalling request: %v", err)
	}
	return nil
}

// writeReply copies the handler's reply into the caller's message, unless
// the caller has left; a fresh reply (FreshReplies) is moved there.
func (x *exchange) writeReply(m proto.Message, fresh bool) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	switch {
	case x.left != nil:
		return nil
	case fresh:
		return moveInto(x.reply, m)
	}
	return copyInto(x.reply, m)
}

// leave tells the handler's side the caller has gone with status err.
func (x *exchange) leave(err error) {
	x.mu.Lock()
	defer x.mu.Unlock()
	x.left = err
}

// call is the client's end of one call.
type call struct {
	l               *Local
	method          string
	ctx             context.Context // tagged by the client's stats handler
	start           time.Time
	opts            []grpc.CallOption
	header, trailer metadata.MD // as the server sent them
}

// begin starts the client's side as gRPC's transport does: the stats
// handler tags the call (it starts the client span and puts its
// context in the outgoing metadata) and hears it begin.
func (l *Local) begin(ctx context.Context, method string, opts []grpc.CallOption, clientStream,
	serverStream bool) *call {
	failFast := true
	for _, o := range opts {
		if f, ok := o.(grpc.FailFastCallOption); ok {
			failFast = f.FailFast
		}
	}
	c := &call{l: l, method: method, start: time.Now(), opts: opts}
	c.ctx = l.clientStats.TagRPC(ctx, &stats.RPCTagInfo{FullMethodName: method, FailFast: failFast})
	l.clientStats.HandleRPC(c.ctx, &stats.Begin{Client: true, BeginTime: c.start, FailFast: failFast,
		IsClientStream: clientStream, IsServerStream: serverStream})
	return c
}

// end reports the call's outcome to the client's stats handler and to the
// call options that asked for its metadata.
func (c *call) end(err error) {
	for _, o := range c.opts {
		switch o := o.(type) {
		case grpc.HeaderCallOption:
			*o.HeaderAddr = c.header
		case grpc.TrailerCallOption:
			*o.TrailerAddr = c.trailer
		case grpc.PeerCallOption:
			*o.PeerAddr = *localPeer
		case grpc.OnFinishCallOption:
			o.OnFinish(err)
		}
	}
	c.l.clientStats.HandleRPC(c.ctx, &stats.End{Client: true, BeginTime: c.start, EndTime: time.Now(), Error: err})
}

// outgoing is the metadata the server receives: the caller's, with the
// trace context its stats handler added, and the service token the
// per-RPC credentials of a dialled connection would add.
func (c *call) outgoing() metadata.MD {
	md, ok := metadata.FromOutgoingContext(c.ctx) // a copy
	if !ok {
		md = metadata.MD{}
	}
	if c.l.creds.token != "" {
		md.Append("authorization", "Bearer "+c.l.creds.token)
	}
	return md
}

// server is the server's end of one call.
type server struct {
	l       *Local
	method  string
	ctx     context.Context
	cancel  context.CancelFunc
	unstop  func() bool // unhooks ctx from the registry's hard stop
	release func()      // tells the registry the call is over
	start   time.Time
}

// accept starts the server's side of c, as gRPC's server does for a new
// stream: the handler's context carries the incoming metadata and the
// peer, is tagged by the server's stats handler (which continues the
// client's trace from the metadata), and ends with the client's context,
// on a hard stop, or when the handler returns.
func (l *Local) accept(c *call, release func()) *server {
	s := &server{l: l, method: c.method, release: release, start: time.Now()}
	md := c.outgoing()
	s.ctx, s.cancel = context.WithCancel(valuesOff{c.ctx})
	s.unstop = context.AfterFunc(l.reg.stopped, s.cancel)
	s.ctx = peer.NewContext(metadata.NewIncomingContext(s.ctx, md), localPeer)
	s.ctx = l.serverStats.TagRPC(s.ctx, &stats.RPCTagInfo{FullMethodName: c.method})
	l.serverStats.HandleRPC(s.ctx, &stats.InHeader{FullMethod: c.method, Header: md})
	l.serverStats.HandleRPC(s.ctx, &stats.Begin{BeginTime: s.start})
	return s
}

// unary runs a unary handler with the server's interceptors.
func (s *server) unary(h *handler, x *exchange) unaryResult {
	ts := &unaryStream{method: s.method}
	ctx := grpc.NewContextWithServerTransportStream(s.ctx, ts)
	dec := func(m any) error {
		if err := x.readRequest(m); err != nil {
			return err
		}
		s.l.serverStats.HandleRPC(s.ctx, &stats.InPayload{RecvTime: time.Now(), Payload: m,
			Length: x.reqSize, WireLength: x.reqSize})
		return nil
	}
	reply, err := h.unary(h.impl, ctx, dec, s.l.checks.unary)
	var r unaryResult
	if err == nil {
		var out proto.Message
		if out, r.replySize, err = sendable(reply); err == nil {
			s.l.serverStats.HandleRPC(s.ctx, &stats.OutPayload{SentTime: time.Now(), Payload: reply,
				Length: r.replySize, WireLength: r.replySize})
			r.replyErr = x.writeReply(out, h.fresh)
		}
	}
	r.err = outcome(err)
	s.end(r.err)
	ts.mu.Lock()
	defer ts.mu.Unlock()
	r.header, r.trailer = ts.header, ts.trailer
	ts.done = true
	return r
}

// outcome is a handler's error as the client receives it: a status of its
// own, never the handler's error value, which a remote client could not
// hold either.
func outcome(err error) error {
	if err == nil {
		return nil
	}
	st, ok := grpcstatus.FromError(err)
	if !ok {
		st = grpcstatus.FromContextError(err) // gRPC's server does the same
	}
	return grpcstatus.ErrorProto(st.Proto())
}

// end reports the handler's outcome and frees the call.
func (s *server) end(err error) {
	s.l.serverStats.HandleRPC(s.ctx, &stats.End{BeginTime: s.start, EndTime: time.Now(), Error: err})
	s.unstop()
	s.cancel()
	s.release()
}

// unaryStream lets a unary handler set headers and trailers
// (grpc.SetHeader), as the transport's stream does.
type unaryStream struct {
	method          string
	mu              sync.Mutex
	header, trailer metadata.MD
	sent, done      bool
}

func (u *unaryStream) Method() string { return u.method }

func (u *unaryStream) SetHeader(md metadata.MD) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.sent || u.done {
		return errHeaderSent
	}
	u.header = metadata.Join(u.header, md)
	return nil
}

func (u *unaryStream) SendHeader(md metadata.MD) error {
	if err := u.SetHeader(md); err != nil {
		return err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	u.sent = true
	return nil
}

func (u *unaryStream) SetTrailer(md metadata.MD) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.done {
		return errHeaderSent
	}
	u.trailer = metadata.Join(u.trailer, md)
	return nil
}

var errHeaderSent = grpcstatus.Error(codes.Internal, "transport: the stream is done or WriteHeader was already called")

// valuesOff is a context with its parent's deadline and cancellation and
// none of its values: a handler learns who calls, and in which trace, from
// the metadata alone, as it would across a network.
type valuesOff struct{ parent context.Context }

func (v valuesOff) Deadline() (time.Time, bool) { return v.parent.Deadline() }
func (v valuesOff) Done() <-chan struct{}       { return v.parent.Done() }
func (v valuesOff) Err() error                  { return v.parent.Err() }
func (valuesOff) Value(any) any                 { return nil }

// AfterFunc lets context.WithCancel follow the parent without a goroutine.
func (v valuesOff) AfterFunc(f func()) func() bool { return context.AfterFunc(v.parent, f) }

// localAddr is both ends' address, for code that logs a peer.
type localAddr struct{}

func (localAddr) Network() string { return "inproc" }
func (localAddr) String() string  { return "in-process" }

var localPeer = &peer.Peer{Addr: localAddr{}, LocalAddr: localAddr{}}

var _ net.Addr = localAddr{}

// splitMethod splits "/pkg.Service/Method".
func splitMethod(full string) (service, method string, ok bool) {
	rest, ok := strings.CutPrefix(full, "/")
	if !ok {
		return "", "", false
	}
	return strings.Cut(rest, "/")
}
