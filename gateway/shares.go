package gateway

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/httperr"
	"github.com/zenmcp/zen/services/platform/slots"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// shares bound the requests each client (named by its verified token)
// runs on the gateway at once: an answer is held whole until its client
// has read it, and a client reading just faster than serve.Paced allows
// held each answer for as long as it took (an 8 MB thread about 25 MB of
// the gateway's memory, for an hour), as many at once as it liked. A
// request past each waits its turn, up to wait, then is refused (429).
// The share is each client's own, with no bound over all of them: a
// client that reads slowly keeps only itself waiting, and the clients are
// the tokens' names, as many as the operator gave out.
type shares struct {
	each int
	wait time.Duration
	held *slots.PerClient // a slot a running request
}

func newShares(each int, wait time.Duration) *shares {
	return &shares{each: each, wait: wait, held: slots.New(each)}
}

// probes are the paths no share holds: they skip the token, so every
// caller of them is one client, and kubelet must not wait behind it.
var probes = []string{"/healthz", "/readyz"}

// unshared are the paths no share holds besides the probes: an import has
// slots of its own (one a client), and a body of up to 64 MiB that a
// refusal could not drain in its time.
var unshared = []string{"POST /v1/threads:import"}

// hold runs next for a request once its client has a slot free. A request
// with a body is refused at once when none is: while it waited, its body's
// time to arrive (serve.BodyDeadline) would run out unread.
func (s *shares) hold(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if slices.Contains(probes, r.URL.Path) || slices.Contains(unshared, r.Method+" "+r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		client := auth.Client(r.Context())
		release, ok := s.held.TryTake(client)
		if !ok {
			if hasBody(r) {
				s.refuse(w, "")
				return
			}
			var err error
			release, err = s.held.Take(r.Context(), client, s.wait)
			if errors.Is(err, slots.ErrBusy) {
				s.refuse(w, fmt.Sprintf(", and this one waited %s for one of them to end", seconds(s.wait)))
			}
			if err != nil {
				return // refused, or its client left while it waited
			}
		}
		defer release()
		next.ServeHTTP(w, r)
	})
}

// hasBody tells whether r's route reads a body: a GET's or a HEAD's is
// never read.
func hasBody(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && r.Body != nil && r.Body != http.NoBody
}

// refuse answers a request past its client's share (429), waited saying
// how long it waited for its turn.
func (s *shares) refuse(w http.ResponseWriter, waited string) {
	w.Header().Set("Retry-After", strconv.Itoa(int(max(time.Second, s.wait).Seconds())))
	httperr.Status(w, http.StatusTooManyRequests, status.New(codes.ResourceExhausted, fmt.Sprintf(
		"%d requests of this client are running on the gateway%s: send it again once one has ended "+
			"(an answer runs until its client has read it all)", s.each, waited)))
}
