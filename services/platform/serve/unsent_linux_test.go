package serve

import (
	"net"
	"net/http"
	"testing"

	"golang.org/x/sys/unix"
)

// accepted is a listener that hands each connection it accepts to conns.
type accepted struct {
	net.Listener
	conns chan net.Conn
}

func (l accepted) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.conns <- c
	}
	return c, err
}

// TestAnAnswerWaitsInTheKernelLittle: a LittleUnsent listener keeps at
// most UnsentBytes of an answer unsent in the kernel. Without the bound,
// a write waited until a third of a send buffer grown to 4 MB had drained,
// and the gateway's deadline on each 64 KiB of an answer cut a client
// reading an 8 MB thread at 20 KB/s.
func TestAnAnswerWaitsInTheKernelLittle(t *testing.T) {
	t.Parallel()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	conns := make(chan net.Conn, 1)
	stop := serveHTTP(LittleUnsent(accepted{lis, conns}), http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	t.Cleanup(func() { _, _ = stop() })
	res, err := http.Get("http://" + lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	raw, err := (<-conns).(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var got int
	var sockErr error
	if err := raw.Control(func(fd uintptr) {
		got, sockErr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
	}); err != nil || sockErr != nil {
		t.Fatal(err, sockErr)
	}
	if got != UnsentBytes {
		t.Errorf("TCP_NOTSENT_LOWAT of a served connection: %d, want %d", got, UnsentBytes)
	}
}
