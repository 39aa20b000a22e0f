package gateway

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/zenmcp/zen/services/platform/httperr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// slots bound the requests of a kind a gateway runs at once: perClient for
// each client (named by its verified token), total for all of them, so
// that no one client takes every slot.
type slots struct {
	what, whats      string // the kind, one and many, as the refusals name it
	perClient, total int

	mu      sync.Mutex
	running map[string]int
	all     int
}

// take holds a slot for client, or returns how to refuse the request.
func (s *slots) take(client string) (release func(), refuse func(w http.ResponseWriter, outcome string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var msg string
	switch {
	case s.running[client] >= s.perClient && s.perClient == 1:
		msg = fmt.Sprintf("your %s before this one is still running: send this one once it has ended", s.what)
	case s.running[client] >= s.perClient:
		msg = fmt.Sprintf("%d of your %s are running: send this one once one has ended", s.perClient, s.whats)
	case s.all >= s.total:
		msg = fmt.Sprintf("%d %s are running on this gateway: send yours again shortly", s.total, s.whats)
	default:
		if s.running == nil {
			s.running = map[string]int{}
		}
		s.running[client]++
		s.all++
		return s.releaser(client), nil
	}
	return nil, func(w http.ResponseWriter, outcome string) {
		if outcome != "" {
			msg += "; " + outcome
		}
		httperr.Status(w, http.StatusTooManyRequests, status.New(codes.ResourceExhausted, msg))
	}
}

func (s *slots) releaser(client string) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.running[client]--; s.running[client] == 0 {
				delete(s.running, client)
			}
			s.all--
		})
	}
}
