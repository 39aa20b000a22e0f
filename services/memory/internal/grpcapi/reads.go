package grpcapi

import (
	"context"
	"sync"

	"github.com/zenmcp/zen/services/platform/auth"
)

// threadReadsEach bounds the whole-thread reads (a call's prepare, a
// read, an export, a branch, a history) memory runs at once for one
// client: a verified token's name, or, without tokens, every caller. A
// read is counted until memory's work on it ends, not until its caller
// leaves: memory cannot stop a read in flight (go-redis reads a reply to
// its end), and clients that dropped reads of a 60 MB thread as fast as
// they sent them had memory read 36 at once, 6.6 GB, while every other
// client's calls slowed to seconds. One past the bound waits its turn
// for as long as its caller does. Eight: the gateway's share of each
// client, and more calls than an agent runs at once.
const threadReadsEach = 8

// clientReads counts each client's whole-thread reads running now.
type clientReads struct {
	mu      sync.Mutex
	clients map[string]*readSlots
}

// readSlots are one client's: a slot a read, and how many reads hold or
// wait for one.
type readSlots struct {
	slots chan struct{}
	users int
}

// take waits for one of client's slots, or for ctx to end.
func (c *clientReads) take(ctx context.Context) (release func(), err error) {
	client := auth.Client(ctx)
	c.mu.Lock()
	if c.clients == nil {
		c.clients = map[string]*readSlots{}
	}
	rs := c.clients[client]
	if rs == nil {
		rs = &readSlots{slots: make(chan struct{}, threadReadsEach)}
		c.clients[client] = rs
	}
	rs.users++
	c.mu.Unlock()
	select {
	case rs.slots <- struct{}{}:
		return func() {
			<-rs.slots
			c.leave(client, rs)
		}, nil
	case <-ctx.Done():
		c.leave(client, rs)
		return nil, ctx.Err()
	}
}

func (c *clientReads) leave(client string, rs *readSlots) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs.users--; rs.users == 0 {
		delete(c.clients, client)
	}
}
