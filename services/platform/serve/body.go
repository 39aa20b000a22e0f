package serve

import (
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
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
		r.Body = &deadlineBody{ReadCloser: r.Body, lift: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts its connection's read deadline at its end. After an
// error it stays: the server reads what is left of a body before it
// answers, and a body cut for its time must not be waited for again. Its
// errors are ErrBodyLate and ErrBodyBroken: the network's own words name
// the server's address, and handlers (the SDK's too) quote what they get.
type deadlineBody struct {
	io.ReadCloser
	lift func()
	once sync.Once
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case err == nil:
	case err == io.EOF:
		b.once.Do(b.lift)
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = ErrBodyLate
	default:
		err = ErrBodyBroken
	}
	return n, err
}

// Why a body could not be read, in words a client may be shown.
var (
	ErrBodyLate   = errors.New("the request body did not arrive in its time")
	ErrBodyBroken = errors.New("the request body was broken off before its end")
)
