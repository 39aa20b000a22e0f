package gateway

import (
	"fmt"
	"net/http"
	"sync"

	"github.com/zenmcp/zen/services/platform/httperr"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// requestSlots bound the requests of a kind a gateway runs at once: total for
// all clients, and with oneEach one for each client (named by its verified
// token), so that no one client takes every slot. Each client's requests
// of any kind are bound by its share besides (shares).
type requestSlots struct {
	what, whats string // the kind, one and many, as the refusals name it
	oneEach     bool
	total       int

	mu      sync.Mutex
	running map[string]int
	all     int
}

// take holds a slot for client, or returns how to refuse the request.
func (s *requestSlots) take(client string) (release func(), refuse func(w http.ResponseWriter, outcome string)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var msg string
	switch {
	case s.oneEach && s.running[client] > 0:
		msg = fmt.Sprintf("your %s before this one is still running: send this one once it has ended", s.what)
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

func (s *requestSlots) releaser(client string) func() {
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
