package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/slots"
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

// threadReads are the slots of one kind of whole-thread read.
type threadReads struct {
	what  string // the kind, as a refusal names it
	slots *slots.PerClient
}

func newThreadReads(what string) threadReads {
	return threadReads{what: what, slots: slots.New(threadReadsEach)}
}

// take waits for one of the caller's slots, up to readWait, or until ctx
// ends.
func (r threadReads) take(ctx context.Context) (release func(), err error) {
	release, err = r.slots.Take(ctx, auth.Client(ctx), readWait)
	if errors.Is(err, slots.ErrBusy) {
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf("memory has run %d %s for this client "+
			"(every caller, without tokens) for %s, and has none free: try again once one has ended",
			threadReadsEach, r.what, readWait))
	}
	return release, err
}
