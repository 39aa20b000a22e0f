package slowbody

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// NarrowServer serves h on loopback with the kernel's buffers for what it
// sends kept small, so that an answer of a megabyte waits on its client
// as it would past the few megabytes the kernel holds; closed is told of
// every connection the server ends, up to 64 of them unread (past that,
// of none: the server must not wait on a test that does not read it).
func NarrowServer(t *testing.T, h http.Handler) (srv *httptest.Server, closed <-chan struct{}) {
	t.Helper()
	ended := make(chan struct{}, 64)
	srv = httptest.NewUnstartedServer(h)
	srv.Listener = narrowListener{srv.Listener}
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			select {
			case ended <- struct{}{}:
			default:
			}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, ended
}

type narrowListener struct{ net.Listener }

func (l narrowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tcp, ok := c.(*net.TCPConn); ok {
		_ = tcp.SetWriteBuffer(8 << 10)
	}
	return c, err
}
