package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"sync"
	"time"
)

// IdleTime is how long a connection may wait for its next request: a
// client that went away without closing its connections does not hold
// them, and a file descriptor each, for as long as zen runs. It is longer
// than most clients and proxies keep an idle connection (Go's 90 s, Node's
// a few seconds, most load balancers 60 s to 10 minutes), so they close
// first and seldom send a request on one the server is closing.
const IdleTime = 15 * time.Minute

// HeaderTime bounds how long a request's head may take to arrive.
const HeaderTime = 10 * time.Second

// UnsentBytes bounds what the kernel holds of an answer that its client
// has not taken yet on a LittleUnsent listener (TCP_NOTSENT_LOWAT, on
// Linux). A write then returns as
// its client reads, not once a third of a send buffer grown to 4 MB has
// drained: a deadline on each piece of an answer bounds how slowly a
// client may read, and without this cut a client reading a large answer
// at 20 KB/s. It also keeps a stalled client's answer in zen's memory, to
// be freed when it is cut, rather than the kernel's.
const UnsentBytes = 128 << 10

// MaxHeaderBytes bounds a request's headers: an agent's, a browser's or a
// probe's take a few KiB, and net/http's default, a megabyte, is read
// before any check of who sent them.
const MaxHeaderBytes = 64 << 10

// ErrStopping is the cause of a request's (or a call's) context that a
// stop cut: it ran past DrainTimeout. The handler then has StopGrace to
// answer, saying so, before its connection closes.
var ErrStopping = errors.New("zen is stopping")

// StopGrace is how long a request a stop cut (ErrStopping) has to answer.
const StopGrace = 2 * time.Second

// HTTP serves handler on lis until ctx is done, then shuts down gracefully,
// letting in-flight requests finish for up to DrainTimeout; those still
// running are then cut (their contexts end with ErrStopping) and have
// StopGrace to answer before their connections close: closed under them,
// a client heard nothing and waited out its own timeout. Every request's
// body has BodyTime to arrive (BodyDeadline).
//
// Connections that have not sent a request yet are closed as the stop
// begins, with the listener. net/http's Shutdown waits 5 to 6 s before it
// counts one as idle (golang/go#22682), and clients leave them open as a
// matter of course: Go's transport keeps a connection it dialed for a
// request that another connection served first. That wait made an idle
// edge or zen serve take over 5 s to exit now and then. A request still on
// its way over such a connection is a new one, which a stopping server
// refuses, as it refuses the connections the closed listener had queued.
func HTTP(ctx context.Context, lis net.Listener, handler http.Handler) error {
	unused := &unusedConns{conns: map[net.Conn]struct{}{}}
	base, cut := context.WithCancelCause(context.Background())
	defer cut(nil)
	srv := &http.Server{
		BaseContext: func(net.Listener) context.Context { return base },
		// Every request, not only those of the handlers that ask for it:
		// a 404 or a probe's path left a body unread too, and net/http read
		// it for as long as its client sent a byte now and then.
		Handler:           BodyDeadline(BodyTime, handler),
		ReadHeaderTimeout: HeaderTime,
		MaxHeaderBytes:    MaxHeaderBytes,
		IdleTimeout:       IdleTime,
		ConnState:         unused.track,
	}
	srv.RegisterOnShutdown(unused.closeAll) // runs once the listener is closed
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), DrainTimeout)
	defer cancel()
	err := srv.Shutdown(shutdownCtx)
	if errors.Is(err, context.DeadlineExceeded) {
		cut(ErrStopping)
		graceCtx, cancelGrace := context.WithTimeout(context.Background(), StopGrace)
		err = srv.Shutdown(graceCtx)
		cancelGrace()
		if errors.Is(err, context.DeadlineExceeded) {
			err = srv.Close()
		}
	}
	if serveErr := <-errc; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return serveErr
	}
	return err
}

// unusedConns are a server's connections that have sent no request yet
// (http.StateNew), for the stop to close.
type unusedConns struct {
	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	stopping bool
}

// track is the server's ConnState hook.
func (u *unusedConns) track(c net.Conn, state http.ConnState) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case state != http.StateNew:
		delete(u.conns, c)
	case u.stopping:
		// Accepted just before the listener closed, and counted after
		// closeAll ran.
		_ = c.Close()
	default:
		u.conns[c] = struct{}{}
	}
}

// closeAll closes every unused connection, and from now on each one the
// server still accepts.
func (u *unusedConns) closeAll() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.stopping = true
	for c := range u.conns {
		_ = c.Close()
	}
	clear(u.conns)
}

// LittleUnsent is lis with UnsentBytes set on each TCP connection it
// accepts: for a listener whose answers are large and have a deadline on
// each piece (the gateway's). MCP's listener does without it: its answers
// are bounded small (a result by the client's output budget, a thread
// resource by 256 KiB), and its calls' latency is the one measured against.
func LittleUnsent(lis net.Listener) net.Listener { return littleUnsent{lis} }

type littleUnsent struct{ net.Listener }

func (l littleUnsent) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		keepLittleUnsent(c)
	}
	return c, err
}
