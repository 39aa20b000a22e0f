package provider

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestTransportSpeaksHTTP2WhereOffered: a provider that offers HTTP/2 (over
// TLS, as every hosted one does) is spoken to in it, so concurrent calls
// share a connection.
func TestTransportSpeaksHTTP2WhereOffered(t *testing.T) {
	t.Parallel()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, r.Proto)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	tr := newTransport(HTTPOptions{Connect: 5 * time.Second})
	tr.TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	resp, err := (&http.Client{Transport: tr}).Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if string(body) != "HTTP/2.0" {
		t.Errorf("the provider saw %s, want HTTP/2.0", body)
	}
}

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int32
}

func (c countingConn) Write(p []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(p)
}

// TestARequestGoesOutInOneWrite: over plain HTTP (a local or custom
// endpoint), a request whose head and body fit the connection's write
// buffer is sent in one write, not its head and then its body. A continued
// conversation's request is a few KB to tens of KB.
// The traced transport counts the body's bytes without hiding it from
// net/http, which sends the head of a body it cannot tell is in memory
// on its own.
func TestARequestGoesOutInOneWrite(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
	}))
	t.Cleanup(srv.Close)
	tr := newTransport(HTTPOptions{Connect: 5 * time.Second})
	client := &http.Client{Transport: traced(tr)}
	var writes atomic.Int32
	dial := tr.DialContext
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return countingConn{Conn: c, writes: &writes}, nil
	}
	for _, size := range []int{100, 7 << 10, 40 << 10} {
		writes.Store(0)
		body := strings.Repeat("x", size)
		resp, err := client.Post(srv.URL, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if n := writes.Load(); n != 1 {
			t.Errorf("a request with a %d-byte body went out in %d writes, want 1", size, n)
		}
	}
}
