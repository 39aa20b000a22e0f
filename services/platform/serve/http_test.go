package serve

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
)

// pipeListener hands HTTP the server ends of net.Pipe connections, so the
// server runs inside a synctest bubble, on its fake clock.
type pipeListener struct {
	conns  chan net.Conn
	closed chan struct{}
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// dial opens a connection to the server and returns the client's end.
func (l *pipeListener) dial() net.Conn {
	client, server := net.Pipe()
	l.conns <- server
	return client
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error {
	close(l.closed)
	return nil
}

func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80} }

// serveHTTP runs HTTP on lis until the returned stop is called; stop
// returns how long HTTP took to return, and its error.
func serveHTTP(lis net.Listener, h http.Handler) (stop func() (time.Duration, error)) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- HTTP(ctx, lis, h) }()
	return func() (time.Duration, error) {
		start := time.Now()
		cancel()
		err := <-done
		return time.Since(start), err
	}
}

// serveLoopback serves h with HTTP on a loopback port until the test ends,
// and returns its address.
func serveLoopback(t *testing.T, h http.Handler) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	stop := serveHTTP(lis, h)
	t.Cleanup(func() { _, _ = stop() })
	return lis.Addr().String()
}

// A client may hold a connection it never sent a request on: Go's
// transport keeps one it dialed for a request that another connection
// served first. net/http's Shutdown waits 5 to 6 s before it counts such a
// connection as idle, which made an idle edge or zen serve take that long
// to exit now and then.
func TestHTTPStopsWithAnUnusedConnectionOpen(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		lis := newPipeListener()
		stop := serveHTTP(lis, http.NotFoundHandler())
		unused := lis.dial()
		defer unused.Close()
		synctest.Wait() // the server has accepted it and waits for a request

		took, err := stop()
		if err != nil {
			t.Errorf("HTTP returned %v, want nil", err)
		}
		if took >= time.Second {
			t.Errorf("HTTP took %v to stop with an unused connection open, want well under a second", took)
		}
		if _, err := unused.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("reading the unused connection after the stop: %v, want EOF (closed by the server)", err)
		}
	})
}

// Closing unused connections takes nothing from a request in flight: it
// runs to its end and gets its whole answer.
func TestHTTPStopLetsARequestInFlightFinish(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		lis := newPipeListener()
		arrived, release := make(chan struct{}), make(chan struct{})
		stop := serveHTTP(lis, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			close(arrived)
			<-release
			_, _ = io.WriteString(w, "the whole answer")
		}))
		busy := lis.dial()
		defer busy.Close()
		unused := lis.dial()
		defer unused.Close()
		go func() { _, _ = io.WriteString(busy, "GET / HTTP/1.1\r\nHost: zen\r\n\r\n") }()
		<-arrived

		stopped := make(chan error, 1)
		go func() {
			_, err := stop()
			stopped <- err
		}()
		synctest.Wait()
		if len(stopped) != 0 {
			t.Fatal("HTTP returned while a request was in flight")
		}
		close(release)
		resp, err := http.ReadResponse(bufio.NewReader(busy), nil)
		if err != nil {
			t.Fatalf("the request in flight got no answer: %v", err)
		}
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatalf("read the answer: %v", err)
		}
		got := struct {
			Status int
			Body   string
		}{resp.StatusCode, string(body)}
		if diff := cmp.Diff(struct {
			Status int
			Body   string
		}{200, "the whole answer"}, got); diff != "" {
			t.Errorf("the answer of the request in flight (-want +got):\n%s", diff)
		}
		if err := <-stopped; err != nil {
			t.Errorf("HTTP returned %v, want nil", err)
		}
	})
}

// A connection the server accepted just before its listener closed may be
// counted only after the stop closed the unused ones: it is closed then.
func TestAConnectionCountedAfterTheStopIsClosed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) { // a read that never ends fails as a deadlock
		u := &unusedConns{conns: map[net.Conn]struct{}{}}
		u.closeAll()
		client, server := net.Pipe()
		defer client.Close()
		u.track(server, http.StateNew)
		if _, err := client.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
			t.Errorf("reading a connection counted after the stop: %v, want EOF (closed)", err)
		}
	})
}

// TestAnIdleConnectionIsClosed after IdleTime: each one kept is a file
// descriptor, and a client that went away without closing its connections
// held them all for as long as zen ran.
func TestAnIdleConnectionIsClosed(t *testing.T) {
	t.Parallel()
	synctest.Test(t, func(t *testing.T) {
		lis := newPipeListener()
		stop := serveHTTP(lis, http.NotFoundHandler())
		defer stop()
		conn := lis.dial()
		defer conn.Close()
		go func() { _, _ = io.WriteString(conn, "GET / HTTP/1.1\r\nHost: zen\r\n\r\n") }()
		r := bufio.NewReader(conn)
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("the request got no answer: %v", err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()

		start := time.Now()
		_ = conn.SetReadDeadline(start.Add(IdleTime + time.Minute))
		if _, err := r.ReadByte(); !errors.Is(err, io.EOF) {
			t.Fatalf("reading an idle connection: %v, want EOF (closed by the server) within %v", err, IdleTime)
		}
		if took := time.Since(start); took < IdleTime {
			t.Errorf("an idle connection was closed after %v, want %v: clients keep theirs open between calls",
				took, IdleTime)
		}
	})
}

// TestHeadersPastTheBoundAreRefused: net/http's default let a request's
// headers run to a megabyte, each read before any check of who sent it.
func TestHeadersPastTheBoundAreRefused(t *testing.T) {
	t.Parallel()
	addr := serveLoopback(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
	got := map[string]int{}
	for name, size := range map[string]int{"an agent's": 4 << 10, "past the bound": MaxHeaderBytes + 8<<10} {
		req, err := http.NewRequest("GET", "http://"+addr+"/", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("X-Padding", strings.Repeat("a", size))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		got[name] = res.StatusCode
	}
	want := map[string]int{"an agent's": 200, "past the bound": http.StatusRequestHeaderFieldsTooLarge}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("status by header size (-want +got):\n%s", diff)
	}
}
