package provider

import (
	"net"
	"net/http"
	"time"
)

// DefaultMaxIdleConnsPerHost is how many idle connections the router keeps
// for each provider host (ZEN_PROVIDER_MAX_IDLE_CONNS): at least as many as
// the calls it serves at once. Go's default of 2 closes the connection of
// every call past the second that ends together, so under load nearly
// every call dials anew (and against a real provider pays a TLS handshake
// too). An idle connection costs a socket and its buffers (writeBuffer
// and 4 KB to read) until the idle timeout closes it.
const DefaultMaxIdleConnsPerHost = 256

// Connections are kept open for long, silent streams and checked while they
// are: a reasoning model may say nothing for minutes, and a peer that went
// away must still be noticed.
const (
	// idleConnTimeout closes a pooled connection no call used for this
	// long; servers close theirs too (nginx after 75 s by default), and a
	// connection closed first by us never fails a call written to it.
	idleConnTimeout = 60 * time.Second
	// keepAliveIdle, keepAliveInterval and keepAliveProbes set TCP
	// keep-alive: a connection silent for keepAliveIdle is probed every
	// keepAliveInterval and dropped after keepAliveProbes unanswered
	// probes, about 90 s after its peer vanished (Linux alone would wait
	// 11 minutes or more).
	keepAliveIdle     = 30 * time.Second
	keepAliveInterval = 15 * time.Second
	keepAliveProbes   = 4
	// h2PingAfter and h2PingTimeout do the same for HTTP/2 through
	// proxies that answer TCP probes themselves: a connection that
	// received no frame for h2PingAfter is pinged, and closed when the
	// ping is not answered within h2PingTimeout.
	h2PingAfter   = 30 * time.Second
	h2PingTimeout = 15 * time.Second
	// writeBuffer holds a request's head and body until they go out
	// together: with Go's 4 KB, a request past it went out as its head and
	// the start of its body, then the rest, and a continued conversation's
	// request is tens of KB. In plain HTTP (a local or custom endpoint) it
	// is then one write; over TLS each record is a write of its own (16 KB
	// at most, smaller on a new connection), so it saves only the split.
	// It is kept for each open HTTP/1.1 connection (HTTP/2 has buffers of
	// its own).
	writeBuffer = 64 << 10
)

// HTTPOptions size the connections to providers.
type HTTPOptions struct {
	// Connect bounds dialing a connection.
	Connect time.Duration
	// MaxIdleConnsPerHost is how many idle connections are kept for each
	// provider host; 0 means DefaultMaxIdleConnsPerHost.
	MaxIdleConnsPerHost int
}

// NewHTTPClient returns the traced HTTP client provider calls use, with the
// default connection pool. There is no overall timeout: streams are bounded
// by the caller's context.
func NewHTTPClient(connect time.Duration) *http.Client {
	return NewHTTPClientWith(HTTPOptions{Connect: connect})
}

// NewHTTPClientWith is NewHTTPClient with its connections sized by o.
func NewHTTPClientWith(o HTTPOptions) *http.Client {
	return &http.Client{Transport: traced(retryAfterTransport{replyCapTransport{activityTransport{newTransport(o)}}})}
}

// newTransport is the connection pool: HTTP/2 where the provider offers it
// (negotiated over TLS, many calls then share one connection), HTTP/1.1
// with up to o.MaxIdleConnsPerHost connections kept otherwise.
func newTransport(o HTTPOptions) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = (&net.Dialer{Timeout: o.Connect, KeepAliveConfig: net.KeepAliveConfig{Enable: true,
		Idle: keepAliveIdle, Interval: keepAliveInterval, Count: keepAliveProbes}}).DialContext
	t.ForceAttemptHTTP2 = true
	t.MaxIdleConnsPerHost = o.MaxIdleConnsPerHost
	if t.MaxIdleConnsPerHost <= 0 {
		t.MaxIdleConnsPerHost = DefaultMaxIdleConnsPerHost
	}
	t.MaxIdleConns = 0 // no limit across hosts: the providers are few, each bounded above
	t.IdleConnTimeout = idleConnTimeout
	t.WriteBufferSize = writeBuffer
	t.HTTP2 = &http.HTTP2Config{SendPingTimeout: h2PingAfter, PingTimeout: h2PingTimeout}
	return t
}
