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
// apart for calls' prepares and for the rest (a read, an export, a
// history, and a branch, which reads a head): an export holds its slot
// while a slow client takes it, and must not hold up the calls. A read is
// counted until memory's work on it
// ends, not until its caller leaves: memory cannot stop a read in flight
// (go-redis reads a reply to its end), and clients that dropped reads of a
// 60 MB thread as fast as they sent them had memory read 36 at once,
// 6.6 GB, while every other client's calls slowed to seconds. Eight: the
// gateway's share of each client, and more calls than an agent runs at
// once.
const threadReadsEach = 8

// readWait bounds how long a read waits for one of its client's slots
// before it is refused, and again for room in its kind's budget, however
// often it makes room (up to twice readWait in all): a caller without a
// deadline (an MCP resource read) would wait as long as a slow export's
// client. An export's threads
// wait for room as long as their client does (exportOne): one refused
// halfway could not be taken up where it stopped.
const readWait = 10 * time.Second

// readBudget bounds the weight of one kind of whole-thread read running in
// the process at once, whoever they are for: per-client slots bound them
// only by the number of clients (8 of each kind a client, each of up to
// about 100 MB of memory's at memory.MaxThreadWeight). A read weighs its
// thread and the ancestors read with it by their heads before it reads
// them (memory.Service.ReadChain); one heavier than the budget runs alone.
// A read costs memory about three times its weight, so the calls' and the
// other reads' budgets keep the threads memory reads within about 200 MB,
// 400 MB while a chain at memory.MaxChainWeight is read in each. The file
// contents a history selects are not weighed.
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
// wait, or until ctx ends.
func (r threadReads) room(ctx context.Context, weight int64, wait time.Duration) (release func(), err error) {
	release, err = r.budget.Take(ctx, auth.Client(ctx), weight, wait)
	if errors.Is(err, slots.ErrOverBudget) {
		return nil, status.Error(codes.ResourceExhausted, fmt.Sprintf("memory has been reading %s of "+
			"threads at once, its bound for %s, for %s: try again in a moment", memory.InUnits(r.budget.Max()), r.what,
			wait))
	}
	return release, err
}

// whole holds one of the caller's slots for a whole-thread read, and the
// room its admit takes once memory has weighed what it will read.
func (r threadReads) whole(ctx context.Context) (*held, error) {
	slot, err := r.take(ctx)
	if err != nil {
		return nil, err
	}
	return &held{reads: r, wait: readWait, slot: slot}, nil
}

// held is what a whole-thread read holds: a slot (none for each thread of
// an export, which holds one for all), and room in its kind's budget,
// taken by admit (a memory.Admit), waiting up to wait in all.
type held struct {
	reads      threadReads
	wait       time.Duration
	slot, room func()
	until      time.Time // the wait's end, from the first admit
}

// admit is a memory.Admit: room made again replaces the room made before,
// within what is left of the wait.
func (h *held) admit(ctx context.Context, weight int64) error {
	h.giveBack()
	if h.until.IsZero() {
		h.until = time.Now().Add(h.wait) // centuries ahead for slots.UntilTheCallerLeaves
	}
	room, err := h.reads.room(ctx, weight, time.Until(h.until))
	if err != nil {
		return err
	}
	h.room = room
	return nil
}

// giveBack gives back the room, once the answer is built: what waits to
// be sent is not memory's work.
func (h *held) giveBack() {
	if h.room != nil {
		h.room()
		h.room = nil
	}
}

// done gives back the room and the slot.
func (h *held) done() {
	h.giveBack()
	if h.slot != nil {
		h.slot()
		h.slot = nil
	}
}
