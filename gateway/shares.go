package gateway

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/httperr"
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

	mu      sync.Mutex
	running map[string]chan struct{} // a client's requests running: a slot each
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
		running := s.of(auth.Client(r.Context()))
		select {
		case running <- struct{}{}:
		default:
			if hasBody(r) {
				s.refuse(w, "")
				return
			}
			if !s.waitTurn(w, r, running) {
				return
			}
		}
		defer func() { <-running }()
		next.ServeHTTP(w, r)
	})
}

// hasBody tells whether r's route reads a body: a GET's or a HEAD's is
// never read.
func hasBody(r *http.Request) bool {
	return r.Method != http.MethodGet && r.Method != http.MethodHead && r.Body != nil && r.Body != http.NoBody
}

// waitTurn waits for one of the client's requests to end; if none does in
// s.wait, it refuses r (429) and returns false, as it does when r's client
// leaves first.
func (s *shares) waitTurn(w http.ResponseWriter, r *http.Request, running chan struct{}) bool {
	t := time.NewTimer(s.wait)
	defer t.Stop()
	select {
	case running <- struct{}{}:
		return true
	case <-r.Context().Done():
		return false
	case <-t.C:
	}
	s.refuse(w, fmt.Sprintf(", and this one waited %s for one of them to end", seconds(s.wait)))
	return false
}

// refuse answers a request past its client's share (429), waited saying
// how long it waited for its turn.
func (s *shares) refuse(w http.ResponseWriter, waited string) {
	w.Header().Set("Retry-After", strconv.Itoa(int(max(time.Second, s.wait).Seconds())))
	httperr.Status(w, http.StatusTooManyRequests, status.New(codes.ResourceExhausted, fmt.Sprintf(
		"%d requests of this client are running on the gateway%s: send it again once one has ended "+
			"(an answer runs until its client has read it all)", s.each, waited)))
}

// of is the slots of client's running requests.
func (s *shares) of(client string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	running := s.running[client]
	if running == nil {
		if s.running == nil {
			s.running = map[string]chan struct{}{}
		}
		running = make(chan struct{}, s.each)
		s.running[client] = running
	}
	return running
}
