package serve

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// BodyTime bounds how long a request's body may take to arrive: an MCP
// call's 4 MiB at 140 KB a second. Without it a client that sent its body
// a byte at a time held a connection, and the buffer its body is read
// into, for as long as it liked: http.Server bounds only the headers.
const BodyTime = 30 * time.Second

// BodyDeadline gives each request's body d to arrive, and lifts the limit
// once it has: the answer that follows, a long call's stream included, is
// not bound by it. (http.Server's ReadTimeout would bind it: the server
// watches a connection while its handler runs, and would end the call.)
//
// An answer begun before the body has ended (a refusal, most often) goes
// out at once on a connection that then closes, and what is left of the
// body is waited for no longer than drainTime. net/http would read up to 256 KiB more of it,
// before the answer and again after it, for as long as the client took to
// send it: a refusal reached its client late, and a client sending slowly
// held the connection and its descriptor. So BodyDeadline must wrap every
// handler that may refuse, the token and Host checks included. (HTTP/1
// only: on HTTP/2, Connection: close would end every stream of the
// connection.)
func BodyDeadline(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if rc.SetReadDeadline(time.Now().Add(d)) != nil {
			next.ServeHTTP(w, r) // a writer without deadlines: nothing to lift either
			return
		}
		body := &deadlineBody{ReadCloser: r.Body, rc: rc}
		r.Body = body
		if r.ProtoMajor != 1 {
			next.ServeHTTP(w, r)
			return
		}
		next.ServeHTTP(&unreadCloser{ResponseWriter: w, body: body}, r)
		if !body.ended.Load() {
			// The connection closes (unreadCloser, or here if nothing was
			// written), once what is left of the body has been read, as
			// much as drainBytes in drainTime.
			w.Header().Set("Connection", "close")
			_ = rc.SetReadDeadline(time.Now().Add(drainTime))
			_, _ = io.CopyN(io.Discard, body, drainBytes)
		}
	})
}

// drainTime and drainBytes bound what is read of a body left unread
// before its connection closes. Not none: a socket closed with bytes
// unread sends a reset, and a client still sending its body (a large call
// with an expired token, a call over MCP's 4 MiB) lost the answer, and
// the WWW-Authenticate it needs, to "connection reset". net/http reads at
// most 256 KiB of it, which a client sending 8 MiB is far from done with,
// and waits as long as drainTime before it closes a connection it gave up
// reading. A client that sends more, or more slowly, is cut.
const (
	drainTime  = 500 * time.Millisecond
	drainBytes = 16 << 20
)

// deadlineBody lifts its connection's read deadline at its end. After an
// error it stays: the server reads what is left of a body before it
// answers, and a body cut for its time must not be waited for again. Its
// errors are ErrBodyLate and ErrBodyBroken: the network's own words name
// the server's address, and handlers (the SDK's too) quote what they get.
type deadlineBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	ended atomic.Bool // all of it has been read
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil:
	case err == io.EOF: // with the last bytes of a declared length, too
		b.end()
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = ErrBodyLate
	default:
		err = ErrBodyBroken
	}
	return n, err
}

// end lifts the read deadline, once.
func (b *deadlineBody) end() {
	if !b.ended.Swap(true) {
		_ = b.rc.SetReadDeadline(time.Time{})
	}
}

// unreadCloser asks for the connection to close when the answer's head
// goes out before its request's body has ended.
type unreadCloser struct {
	http.ResponseWriter
	body  *deadlineBody
	begun sync.Once
}

// begin marks the connection to close if the body has not ended.
func (w *unreadCloser) begin() {
	w.begun.Do(func() {
		if !w.body.ended.Load() {
			w.Header().Set("Connection", "close")
		}
	})
}

func (w *unreadCloser) WriteHeader(code int) {
	if code >= 200 || code == http.StatusSwitchingProtocols {
		w.begin() // an informational head (100, 103) is not the answer's
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *unreadCloser) Write(p []byte) (int, error) {
	w.begin()
	return w.ResponseWriter.Write(p)
}

func (w *unreadCloser) Flush() { _ = w.FlushError() }

// FlushError is Flush with its error: http.ResponseController uses it, so
// a handler learns of a failed write.
func (w *unreadCloser) FlushError() error {
	w.begin()
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *unreadCloser) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Why a body could not be read, in words a client may be shown.
var (
	ErrBodyLate   = errors.New("the request body did not arrive in its time")
	ErrBodyBroken = errors.New("the request body was broken off before its end")
)
