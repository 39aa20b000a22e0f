package gateway

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
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
	// reading bounds the requests with a body boundBodies holds at once,
	// of all clients (each client's are bound by its share, shares): each
	// body is up to size, and clients may send many slowly.
	reading int
	// sendTime bounds how long a piece of an answer may wait for its
	// client to take it (serve.Paced).
	sendTime time.Duration
	// requestsEach bounds a client's requests running at once, and
	// requestWait how long one past it waits for its turn (shares).
	requestsEach int
	requestWait  time.Duration
	// threadRoom bounds what the threads the gateway holds whole weigh
	// together, and roomWait how long a read waits for room
	// (wholethread.go).
	threadRoom int64
	roomWait   time.Duration
}

// servedBodies are the bounds a served gateway holds bodies to.
var servedBodies = bodyBounds{
	size:       maxJSONBody,
	time:       serve.BodyTime,
	importTime: importReadTime,
	reading:    64,
	sendTime:   serve.SendTime,
	// Eight: the thread browser sends two at a time from each page open.
	// Ten seconds: a body waits its turn within its own time to arrive.
	requestsEach: 8,
	requestWait:  10 * time.Second,
	// Memory's bound on one thread (Limits.max_thread_weight): one thread
	// at the bound is held at a time.
	threadRoom: 32 << 20,
	roomWait:   10 * time.Second,
}

// boundBodies reads a generated route's body whole, up to b.size, before
// grpc-gateway decodes it: grpc-gateway would answer a body too large or
// cut for its time as a malformed one (400, naming no bound), since it
// turns every read error into InvalidArgument. Past b.reading requests
// with a body, another is refused (429) until one has been answered.
func boundBodies(b bodyBounds, next http.Handler) http.Handler {
	held := &requestSlots{
		what:  "request with a body",
		whats: "requests with a body",
		total: b.reading,
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A GET's body means nothing to its route, which does not read it:
		// it takes no slot (serve.BodyDeadline closes its connection).
		if !hasBody(r) {
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
