package serve

import (
	"context"
	"io"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/stats"
	grpcstatus "google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
)

// sent is a message in a stream: a copy no one else holds, and the size
// of its encoding.
type sent struct {
	m    proto.Message
	size int
}

// send is m as a stream carries it, or the status gRPC's codec refuses it
// with: a copy, unless its sender handed it over (HandOver).
func send(m any, handedOver bool) (sent, error) {
	pm, size, err := sendable(m)
	if err != nil {
		return sent{}, err
	}
	if !handedOver {
		pm = proto.Clone(pm)
	}
	return sent{m: pm, size: size}, nil
}

// streamBuffer is how many messages a side may send ahead of the other's
// reading, as HTTP/2's flow-control window lets it over a network.
const streamBuffer = 16

// pipe is what passes between the two ends of a streaming call.
type pipe struct {
	toServer   chan sent     // the client's messages; closed by CloseSend
	toClient   chan sent     // the server's
	headerSent chan struct{} // closed once header holds what the server sent
	header     metadata.MD
	done       chan struct{} // closed once the handler has returned
	trailer    metadata.MD   // set before done closes, as is status
	status     error         // a status error, or nil
}

func (l *Local) newStream(ctx context.Context, desc *grpc.StreamDesc, _ *grpc.ClientConn, method string,
	opts ...grpc.CallOption) (grpc.ClientStream, error) {
	c := l.begin(ctx, method, opts, desc.ClientStreams, desc.ServerStreams)
	if err := ctx.Err(); err != nil {
		err = grpcstatus.FromContextError(err).Err()
		c.end(err)
		return nil, err
	}
	h, release, err := l.reg.enter(method)
	if err == nil && h.stream == nil {
		release()
		err = grpcstatus.Errorf(codes.Unimplemented, "in-process: %s is unary; call it with Invoke", method)
	}
	if err != nil {
		c.end(err)
		return nil, err
	}
	p := &pipe{
		toServer:   make(chan sent, streamBuffer),
		toClient:   make(chan sent, streamBuffer),
		headerSent: make(chan struct{}),
		done:       make(chan struct{}),
	}
	s := l.accept(c, release)
	cs := &clientStream{call: c, p: p, desc: desc, abort: s.cancel, finished: make(chan struct{}),
		handOver: handsOver(opts)}
	// A caller that gives up ends the call at once, whether or not it
	// reads again, as gRPC's client does.
	cs.unwatch = context.AfterFunc(c.ctx, func() { cs.finish(grpcstatus.FromContextError(c.ctx.Err()).Err()) })
	ss := &serverStream{s: s, p: p}
	ss.ctx = grpc.NewContextWithServerTransportStream(s.ctx, transportStream{ss})
	handlerWorkers.run(func() { ss.run(h) })
	return cs, nil
}

// clientStream is the caller's end (grpc.ClientStream). Like gRPC's, it
// may send and receive from two goroutines, but not send from two.
type clientStream struct {
	*call
	p          *pipe
	desc       *grpc.StreamDesc
	abort      context.CancelFunc // ends the handler's context
	unwatch    func() bool
	sendClosed bool
	handOver   bool // the caller hands its messages over (HandOver)

	once     sync.Once
	finished chan struct{}
	err      error // what every read returns once finished: io.EOF or a status
}

func (cs *clientStream) Context() context.Context { return cs.ctx }

func (cs *clientStream) Header() (metadata.MD, error) {
	select {
	case <-cs.p.headerSent:
		return cs.p.header.Copy(), nil
	case <-cs.ctx.Done():
		return nil, grpcstatus.FromContextError(cs.ctx.Err()).Err()
	}
}

// Trailer is what the server set, once a read has returned an error.
func (cs *clientStream) Trailer() metadata.MD {
	select {
	case <-cs.finished:
		return cs.trailer.Copy()
	default:
		return nil
	}
}

func (cs *clientStream) CloseSend() error {
	if !cs.sendClosed {
		cs.sendClosed = true
		close(cs.p.toServer)
	}
	return nil
}

func (cs *clientStream) SendMsg(m any) error {
	if cs.sendClosed {
		return grpcstatus.Error(codes.Internal, "SendMsg called after CloseSend")
	}
	msg, err := send(m, cs.handOver)
	if err != nil {
		cs.finish(err)
		return err
	}
	select {
	case cs.p.toServer <- msg:
		cs.l.clientStats.HandleRPC(cs.ctx, &stats.OutPayload{Client: true, Payload: m, Length: msg.size,
			WireLength: msg.size, SentTime: time.Now()})
		return nil
	case <-cs.p.done:
		return io.EOF // the outcome is for RecvMsg to say, as in gRPC
	case <-cs.ctx.Done():
		err := grpcstatus.FromContextError(cs.ctx.Err()).Err()
		cs.finish(err)
		return err
	}
}

func (cs *clientStream) RecvMsg(m any) error {
	select {
	case <-cs.finished:
		return cs.err
	default:
	}
	msg, ok, err := cs.next()
	if !ok {
		return cs.finish(err)
	}
	if err := moveInto(m, msg.m); err != nil {
		return cs.finish(err)
	}
	cs.l.clientStats.HandleRPC(cs.ctx, &stats.InPayload{Client: true, Payload: m, Length: msg.size,
		WireLength: msg.size, RecvTime: time.Now()})
	if cs.desc.ServerStreams {
		return nil
	}
	// One reply only: the call must end now, as gRPC's client checks.
	if _, more, err := cs.next(); more {
		return cs.finish(grpcstatus.Error(codes.Internal,
			"cardinality violation: expected <EOF> for non server-streaming RPCs, but received another message"))
	} else if err := cs.finish(err); err != io.EOF {
		return err
	}
	return nil
}

// next is the server's next message; or, once it has returned and its
// messages are read, ok false with its status (nil when OK); or the
// caller's context error.
func (cs *clientStream) next() (msg sent, ok bool, err error) {
	select {
	case msg := <-cs.p.toClient:
		return msg, true, nil
	case <-cs.p.done:
		// Whatever the handler sent it sent before returning.
		select {
		case msg := <-cs.p.toClient:
			return msg, true, nil
		default:
			return sent{}, false, cs.p.status
		}
	case <-cs.ctx.Done():
		return sent{}, false, grpcstatus.FromContextError(cs.ctx.Err()).Err()
	}
}

// finish ends the call once, with err (nil for OK), and returns what
// reads return from then on.
func (cs *clientStream) finish(err error) error {
	cs.once.Do(func() {
		cs.unwatch()
		if err != nil {
			cs.abort() // as a reset stream would, when the handler still runs
		}
		select {
		case <-cs.p.headerSent:
			cs.header = cs.p.header.Copy()
		default:
		}
		select {
		case <-cs.p.done:
			cs.trailer = cs.p.trailer.Copy()
		default:
		}
		cs.end(err)
		cs.err = err
		if err == nil {
			cs.err = io.EOF
		}
		close(cs.finished)
	})
	<-cs.finished
	return cs.err
}

// serverStream is the handler's end (grpc.ServerStream).
type serverStream struct {
	s   *server
	p   *pipe
	ctx context.Context

	mu              sync.Mutex
	header, trailer metadata.MD
	headerSent      bool
}

// run serves the call and hands its outcome to the client.
func (ss *serverStream) run(h *handler) {
	info := &grpc.StreamServerInfo{
		FullMethod:     ss.s.method,
		IsClientStream: h.stream.ClientStreams,
		IsServerStream: h.stream.ServerStreams,
	}
	err := outcome(ss.s.l.checks.stream(h.impl, ss, info, h.stream.Handler))
	ss.mu.Lock()
	if !ss.headerSent {
		ss.sendHeaderLocked() // a trailers-only answer still ends the wait for headers
	}
	ss.p.trailer, ss.p.status = ss.trailer, err
	ss.mu.Unlock()
	close(ss.p.done)
	ss.s.end(err)
}

func (ss *serverStream) Context() context.Context { return ss.ctx }

func (ss *serverStream) SetHeader(md metadata.MD) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.headerSent {
		return errHeaderSent
	}
	ss.header = metadata.Join(ss.header, md)
	return nil
}

func (ss *serverStream) SendHeader(md metadata.MD) error {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.headerSent {
		return errHeaderSent
	}
	ss.header = metadata.Join(ss.header, md)
	ss.sendHeaderLocked()
	return nil
}

func (ss *serverStream) sendHeaderLocked() {
	ss.headerSent = true
	ss.p.header = ss.header
	close(ss.p.headerSent)
	ss.s.l.serverStats.HandleRPC(ss.s.ctx, &stats.OutHeader{FullMethod: ss.s.method, Header: ss.header.Copy()})
}

func (ss *serverStream) SetTrailer(md metadata.MD) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	ss.trailer = metadata.Join(ss.trailer, md)
}

func (ss *serverStream) SendMsg(m any) error {
	msg, err := send(m, false)
	if err != nil {
		return err
	}
	ss.mu.Lock()
	if !ss.headerSent {
		ss.sendHeaderLocked()
	}
	ss.mu.Unlock()
	select {
	case ss.p.toClient <- msg:
		ss.s.l.serverStats.HandleRPC(ss.s.ctx, &stats.OutPayload{Payload: m, Length: msg.size,
			WireLength: msg.size, SentTime: time.Now()})
		return nil
	case <-ss.s.ctx.Done():
		return grpcstatus.FromContextError(ss.s.ctx.Err()).Err()
	}
}

func (ss *serverStream) RecvMsg(m any) error {
	select {
	case msg, ok := <-ss.p.toServer:
		if !ok {
			return io.EOF
		}
		if err := moveInto(m, msg.m); err != nil {
			return err
		}
		ss.s.l.serverStats.HandleRPC(ss.s.ctx, &stats.InPayload{Payload: m, Length: msg.size,
			WireLength: msg.size, RecvTime: time.Now()})
		return nil
	case <-ss.s.ctx.Done():
		return grpcstatus.FromContextError(ss.s.ctx.Err()).Err()
	}
}

// transportStream lets a streaming handler use grpc.SetHeader and
// grpc.Method, as gRPC's transport stream does.
type transportStream struct{ ss *serverStream }

func (t transportStream) Method() string                  { return t.ss.s.method }
func (t transportStream) SetHeader(md metadata.MD) error  { return t.ss.SetHeader(md) }
func (t transportStream) SendHeader(md metadata.MD) error { return t.ss.SendHeader(md) }
func (t transportStream) SetTrailer(md metadata.MD) error { t.ss.SetTrailer(md); return nil }
