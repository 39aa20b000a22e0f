package grpcapi

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
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

// readBudget bounds the weight of one kind of whole-thread read running in
// the process at once, whoever they are for: per-client slots bound them
// only by the number of clients (16 reads a client, each of up to about
// 100 MB of memory's at memory.MaxThreadWeight). A read weighs its thread
// and the ancestors read with it (memory.Service.Weigh) before it reads
// them; one heavier than the budget runs alone. One thread at its bound:
// a read costs memory about three times its weight, so the calls' and the
// other reads' budgets keep memory's reads within about 200 MB, 400 MB
// while a chain at memory.MaxChainWeight is read in each.
const readBudget = memory.MaxThreadWeight

// threadReads are the slots and the budget of one kind of whole-thread
// read.
type threadReads struct {
	what   string // the kind, as a refusal names it
	slots  *slots.PerClient
	budget *slots.Budget
}

func newThreadReads(what string) threadReads {
	return threadReads{what: what, slots: slots.New(threadReadsEach), budget: slots.NewBudget(readBudget)}
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

// room waits until the process has room for a read weighing weight, up to
// readWait, or until ctx ends.
func (r threadReads) room(ctx context.Context, weight int64) (release func(), err error) {
	release, err = r.budget.Take(ctx, weight, readWait)
	if errors.Is(err, slots.ErrOverBudget) {
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf("memory has been reading %d MiB of "+
			"threads at once, its bound for %s, for %s: try again in a moment", r.budget.Max()>>20, r.what,
			readWait))
	}
	return release, err
}

// readWhole holds what a read of thread id with its turns needs: one of
// the caller's slots of r, then room in r's budget for the read.
func (s *Server) readWhole(ctx context.Context, r threadReads, id string) (release func(), err error) {
	slot, err := r.take(ctx)
	if err != nil {
		return nil, err
	}
	room, err := s.roomFor(ctx, r, id)
	if err != nil {
		slot()
		return nil, err
	}
	return func() { room(); slot() }, nil
}

// roomFor weighs thread id as the caller's client reads it, and waits for
// room for it in r's budget.
func (s *Server) roomFor(ctx context.Context, r threadReads, id string) (release func(), err error) {
	weight, err := s.svc.Weigh(ctx, id, auth.Client(ctx))
	if err != nil {
		return nil, err
	}
	return r.room(ctx, weight)
}
