package slots

import (
	"context"
	"errors"
	"sync"
	"time"
)

// ErrBusy is Take's answer when every slot of the client stayed held for
// the whole wait.
var ErrBusy = errors.New("slots: every slot of the client is held")

// PerClient holds each client's slots. Its zero value is not usable: see
// New.
type PerClient struct {
	each int

	mu      sync.Mutex
	clients map[string]*held
}

// held are one client's slots, and how many callers hold or wait for one:
// the client is forgotten once none does.
type held struct {
	slots chan struct{}
	users int
}

// New gives each client each slots.
func New(each int) *PerClient { return &PerClient{each: each, clients: map[string]*held{}} }

// TryTake holds one of client's slots, if one is free.
func (p *PerClient) TryTake(client string) (release func(), ok bool) {
	h := p.join(client)
	select {
	case h.slots <- struct{}{}:
		return p.releaser(client, h), true
	default:
		p.leave(client, h)
		return nil, false
	}
}

// Take waits up to wait for one of client's slots, or until ctx ends
// (ctx.Err()); ErrBusy says none came free in time.
func (p *PerClient) Take(ctx context.Context, client string, wait time.Duration) (release func(), err error) {
	h := p.join(client)
	select {
	case h.slots <- struct{}{}:
		return p.releaser(client, h), nil
	default:
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case h.slots <- struct{}{}:
		return p.releaser(client, h), nil
	case <-ctx.Done():
		p.leave(client, h)
		return nil, ctx.Err()
	case <-timer.C:
		p.leave(client, h)
		return nil, ErrBusy
	}
}

func (p *PerClient) join(client string) *held {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := p.clients[client]
	if h == nil {
		h = &held{slots: make(chan struct{}, p.each)}
		p.clients[client] = h
	}
	h.users++
	return h
}

func (p *PerClient) releaser(client string, h *held) func() {
	var once sync.Once
	return func() {
		once.Do(func() {
			<-h.slots
			p.leave(client, h)
		})
	}
}

func (p *PerClient) leave(client string, h *held) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if h.users--; h.users == 0 {
		delete(p.clients, client)
	}
}
