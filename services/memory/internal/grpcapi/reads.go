package grpcapi

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// threadReadsEach bounds the whole-thread reads memory runs at once for
// one client (a verified token's name, or, without tokens, every caller),
// apart for calls' prepares and for the rest (a read, an export, a branch,
// a history): an export holds its read while a slow client takes it, and
// must not hold up the calls. A read is counted until memory's work on it
// ends, not until its caller leaves: memory cannot stop a read in flight
// (go-redis reads a reply to its end), and clients that dropped reads of a
// 60 MB thread as fast as they sent them had memory read 36 at once,
// 6.6 GB, while every other client's calls slowed to seconds. Eight: the
// gateway's share of each client, and more calls than an agent runs at
// once.
const threadReadsEach = 8

// readWait bounds how long a read waits for one of its client's slots
// before it is refused: a caller without a deadline (an MCP resource read)
// would wait as long as a slow export's client.
const readWait = 10 * time.Second

// clientReads counts each client's whole-thread reads of a kind running now.
type clientReads struct {
	what string // the kind, as a refusal names it

	mu      sync.Mutex
	clients map[string]*readSlots
}

// readSlots are one client's: a slot a read, and how many reads hold or
// wait for one.
type readSlots struct {
	slots chan struct{}
	users int
}

// take waits for one of the caller's slots, up to readWait, or until ctx
// ends.
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
	default:
	}
	wait := time.NewTimer(readWait)
	defer wait.Stop()
	select {
	case rs.slots <- struct{}{}:
		return func() {
			<-rs.slots
			c.leave(client, rs)
		}, nil
	case <-ctx.Done():
		c.leave(client, rs)
		return nil, ctx.Err()
	case <-wait.C:
		c.leave(client, rs)
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf("memory has run %d %s for this client "+
			"(every caller, without tokens) for %s, and has none free: try again once one has ended",
			threadReadsEach, c.what, readWait))
	}
}

func (c *clientReads) leave(client string, rs *readSlots) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if rs.users--; rs.users == 0 {
		delete(c.clients, client)
	}
}
