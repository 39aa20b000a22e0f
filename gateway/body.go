package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/serve"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// maxJSONBody bounds the body of a generated route. Each takes a few
// fields (a model's name, a branch's title); without a bound they decoded
// a body of any size into memory.
const maxJSONBody = 1 << 20

// bodyBounds are what request bodies, and an export's answer, are held to.
type bodyBounds struct {
	size       int64         // a generated route's body (an import's is maxImportBytes)
	time       time.Duration // how long a body may take to arrive
	importTime time.Duration // how long an import's may
	// reading and readingEach bound the requests with a body boundBodies
	// holds at once, for all clients and for each: each body is up to
	// size, and a client may send many slowly.
	reading, readingEach int
	// sendTime bounds how long an export's line may wait for the client
	// to take it.
	sendTime time.Duration
}

// servedBodies are the bounds a served gateway holds bodies to.
var servedBodies = bodyBounds{
	size:        maxJSONBody,
	time:        serve.BodyTime,
	importTime:  importReadTime,
	reading:     64,
	readingEach: 16,
	sendTime:    exportSendTime,
}

// exportSendTime bounds how long an export's line may wait for its client
// to take it: a client that stops reading would otherwise hold memory's
// stream, and the lines waiting to go out, as long as it kept its
// connection.
const exportSendTime = 30 * time.Second

// boundBodies reads a generated route's body whole, up to b.size, before
// grpc-gateway decodes it: grpc-gateway would answer a body too large or
// cut for its time as a malformed one (400, naming no bound), since it
// turns every read error into InvalidArgument. Past b.readingEach requests
// with a body of one client, or b.reading of all, another is refused
// (429) until one has been answered.
func boundBodies(b bodyBounds, next http.Handler) http.Handler {
	held := &slots{
		what:      "request with a body",
		whats:     "requests with a body",
		perClient: b.readingEach,
		total:     b.reading,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > b.size {
			refuseLargeBody(w, r, b.size, "")
			return
		}
		release, refuse := held.take(auth.Client(r.Context()))
		if release == nil {
			refuse(w, "")
			return
		}
		defer release() // the body is held until the route has answered
		body, err := io.ReadAll(io.LimitReader(r.Body, b.size+1))
		switch {
		case err != nil:
			refuseUnreadBody(w, r, err, b.time, "", "")
			return
		case int64(len(body)) > b.size:
			refuseLargeBody(w, r, b.size, "")
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// refuseLargeBody answers a body over limit (413), advice saying what to
// do instead.
func refuseLargeBody(w http.ResponseWriter, r *http.Request, limit int64, advice string) {
	msg := fmt.Sprintf("%s %s takes a body of at most %d bytes", r.Method, r.URL.Path, limit)
	if advice != "" {
		msg += ": " + advice
	}
	httperr.Status(w, http.StatusRequestEntityTooLarge, status.New(codes.InvalidArgument, msg))
}

// refuseUnreadBody answers a body that could not be read whole: one past
// its size (refuseLargeBody, with largeAdvice), cut for its time, or broken
// off (serve.BodyDeadline's errors); outcome, when set, ends the answer.
func refuseUnreadBody(w http.ResponseWriter, r *http.Request, err error, allowed time.Duration,
	largeAdvice, outcome string) {
	var msg string
	switch tooLarge := (*http.MaxBytesError)(nil); {
	case errors.As(err, &tooLarge):
		refuseLargeBody(w, r, tooLarge.Limit, largeAdvice)
		return
	case errors.Is(err, serve.ErrBodyLate):
		msg = serve.ErrBodyLate.Error() + " (" + seconds(allowed) + "): send it as fast as it is read"
	default:
		msg = serve.ErrBodyBroken.Error() + ": send it again"
	}
	if outcome != "" {
		msg += "; " + outcome
	}
	httperr.Status(w, http.StatusBadRequest, status.New(codes.InvalidArgument, msg))
}

// seconds words d in seconds, however long: "30 s", "120 s".
func seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s" }

// closeUnread closes the connection after an answer begun before the
// request's body had all been read. net/http would first read up to
// 256 KiB more of it, for as long as the client took to send it (up to the
// body's time), and a refusal would reach the client only then.
func closeUnread(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		body := &endSeen{ReadCloser: r.Body}
		r.Body = body
		next.ServeHTTP(&unreadCloser{ResponseWriter: w, body: body}, r)
	})
}

// endSeen is a body that knows whether it was read to its end.
type endSeen struct {
	io.ReadCloser
	ended atomic.Bool
}

func (b *endSeen) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.ended.Store(true)
	}
	return n, err
}

// unreadCloser asks for the connection to close when the answer's head
// goes out before its request's body has ended.
type unreadCloser struct {
	http.ResponseWriter
	body  *endSeen
	begun bool
}

func (w *unreadCloser) WriteHeader(code int) {
	if !w.begun {
		w.begun = true
		if !w.body.ended.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *unreadCloser) Write(p []byte) (int, error) {
	if !w.begun {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

func (w *unreadCloser) Flush() {
	if !w.begun {
		w.WriteHeader(http.StatusOK)
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *unreadCloser) Unwrap() http.ResponseWriter { return w.ResponseWriter }
