package gateway

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/slots"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The gateway holds the threads it reads whole within a room
// (bodyBounds.threadRoom: memory's bound on one thread, so that one thread
// at the bound is held at a time), whoever they are for. A route holds a
// thread while it writes it, as slowly as its client reads (serve.Paced),
// and per-client shares bound the readers only by the number of clients:
// eight slow readers of a thread at the bound, with one token, took zen
// serve past 1.2 GB. A thread heavier than the room is read alone; a read
// that finds no room within roomWait is refused (429).

// wholeThread reads thread id whole within the gateway's room (withinRoom),
// waiting up to roomWait. The caller holds the room, with release, for as
// long as it holds the thread; cost is how many times its weight it takes
// to hold it (the generated route's JSON, built whole, takes several).
func (p threadPaths) wholeThread(ctx context.Context, id string, cost int64) (*memoryv1.GetThreadResponse,
	func(), error) {
	var got *memoryv1.GetThreadResponse
	release, err := p.withinRoom(ctx, id, cost, p.roomWait, func(weight int64) (err error) {
		got, err = p.memory.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id, MaxWeight: weight})
		return err
	})
	return got, release, err
}

// withinRoom weighs thread id by memory's basic view, waits up to wait for
// room for cost times its weight, and has read read it within that weight
// (memory sends no thread that weighs more: max_weight). A thread written
// anew, heavier, since it was weighed is weighed again, up to readAttempts
// times. The caller holds the room until release; read's result is held
// with it.
func (p threadPaths) withinRoom(ctx context.Context, id string, cost int64, wait time.Duration,
	read func(weight int64) error) (func(), error) {
	client := auth.Client(ctx)
	holding := wait < slots.UntilTheCallerLeaves && client != "" && p.holders.Holding(client)
	if holding {
		// Its reads waiting for room behind one it holds (a thread read
		// slowly) would keep every other client's behind them: 9 s for a
		// thread of a kilobyte. Without tokens every caller is one client,
		// and none would wait.
		wait = 0
	}
	until := time.Now().Add(wait) // centuries ahead for slots.UntilTheCallerLeaves
	for range readAttempts {
		basic, err := p.memory.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id,
			View: memoryv1.ThreadView_THREAD_VIEW_BASIC})
		if err != nil {
			return nil, err
		}
		weight := max(basic.GetWeight(), 1) // max_weight 0 would be none
		release, err := p.takeRoom(ctx, client, cost*weight, time.Until(until))
		if errors.Is(err, slots.ErrOverBudget) {
			return nil, &noRoom{room: p.room.Max(), wait: wait, yours: holding}
		}
		if err != nil {
			return nil, err
		}
		cut := cutOf(serve.AnswerOf(ctx))
		if off := cut.Off; off != nil {
			cut.Off = func() {
				p.room.Demote(client, p.roomWait) // its next read waits behind the others
				off()
			}
		}
		release = p.holders.Hold(client, release, cut)
		if err := readHolding(weight, read, release); !heavierThanAsked(err) {
			if err != nil {
				return nil, err
			}
			return release, nil
		}
	}
	return nil, status.Errorf(codes.Unavailable, "thread %s kept changing while the gateway read it: try again", id)
}

// heavierThanAsked reports whether err is memory's refusal of a thread
// heavier than the max_weight a read asked for.
func heavierThanAsked(err error) bool {
	reason, _ := origin.Of(err)
	return reason == origin.HeavierThanAsked
}

// readHolding runs read, giving the room back if it fails, or panics (a
// route cutting its transfer): a room kept would be kept for good.
func readHolding(weight int64, read func(weight int64) error, release func()) (err error) {
	done := false
	defer func() {
		if !done || err != nil {
			release()
		}
	}()
	err = read(weight)
	done = true
	return err
}

// cutLease is how long a read's answer goes out, while another client's
// read waits for room, before its pace is judged (cutRate): its start may
// be slow. It is short, so that a wait outlasts a few of them: reads that
// took room and read nothing, from two tokens taking turns, each held it
// for a lease of 9 s (as long as its thread took at 8 MiB/s) and kept
// every other client's reads refused for minutes. One read as slowly as
// serve.Paced allows held the room for hours.
const cutLease = 3 * time.Second

// cutRate is the pace below which a read past its lease is cut off for a
// waiting one, in bytes a second: a reader on an ordinary link (3 MB/s) is
// not, whatever another client does to keep a read waiting; one at 6 KB/s,
// which held the room for hours, is.
const cutRate = 1 << 20

// paceWindow is how far back the pace of a read is judged, once the
// waiting reads have watched it that long: a read that sent most of its
// thread at once and then stalled kept its average above cutRate for half
// a minute. A reader that takes its bytes in bursts less than this apart
// keeps its pace.
const paceWindow = 4 * time.Second

// sample is how much of a read's answer had gone out when a waiting read
// looked.
type sample struct {
	at   time.Time
	sent int64
}

// cutOf is how a read whose answer is answer (nil: none to cut) is cut off
// for another client's waiting read. Its lease runs from when its answer's
// bytes began to go out (after memory's read, which may wait its turn for
// seconds; for an export, this thread's line), and past it the read is cut
// when its pace is below cutRate: over the last paceWindow the waiting
// reads watched, or since it began when they have watched less.
func cutOf(answer serve.Answer) slots.Cut {
	if answer == nil {
		return slots.Cut{}
	}
	answer.Mark()
	from := answer.Sent()
	var seen []sample // Stale runs under the Holders' lock
	return slots.Cut{Off: answer.Cut, Stale: func(now time.Time) bool {
		moved := answer.Moved()
		if moved.IsZero() {
			return false // nothing is going out yet: memory's read, not the client, holds it
		}
		sent := answer.Sent() - from
		seen = append(seen, sample{at: now, sent: sent})
		for len(seen) > 1 && now.Sub(seen[1].at) >= paceWindow {
			seen = seen[1:]
		}
		if now.Sub(moved) < cutLease {
			return false
		}
		base := seen[0]
		if now.Sub(base.at) < paceWindow {
			base = sample{at: moved}
		}
		return float64(sent-base.sent) < cutRate*now.Sub(base.at).Seconds()
	}}
}

// cutCheck is how often a read waiting for room cuts off the reads that
// hold it past their lease.
const cutCheck = 500 * time.Millisecond

// takeRoom takes room as p.room.Take does; while it waits, the reads of
// other clients that hold room past their lease are cut off, every
// cutCheck (a timer: a read the room takes at once, the usual, starts
// nothing).
func (p threadPaths) takeRoom(ctx context.Context, client string, weight int64, wait time.Duration) (func(),
	error) {
	var mu sync.Mutex
	var check *time.Timer
	mu.Lock()
	check = time.AfterFunc(cutCheck, func() {
		p.holders.CutStale(client, time.Now())
		mu.Lock()
		defer mu.Unlock()
		if check != nil {
			check.Reset(cutCheck)
		}
	})
	mu.Unlock()
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		check.Stop()
		check = nil
	}()
	return p.room.Take(ctx, client, weight, wait)
}

// readAttempts bounds how often a read weighs a thread that grew past its
// weight again.
const readAttempts = 3

// noRoom refuses a read that found no room within wait, or at once when
// its client's other reads hold room (yours).
type noRoom struct {
	room  int64
	wait  time.Duration
	yours bool
}

func (e *noRoom) Error() string { return e.GRPCStatus().Message() }

// RetryAfter is when a client should try again (writeStatus).
func (e *noRoom) RetryAfter() time.Duration { return max(time.Second, e.wait) }

// GRPCStatus is what writeStatus answers: 429.
func (e *noRoom) GRPCStatus() *status.Status {
	if e.yours {
		return status.New(codes.ResourceExhausted, fmt.Sprintf("your other reads of whole threads hold part of "+
			"the gateway's %g MiB for them, and this one does not fit beside them: send it again once they have "+
			"ended", float64(e.room)/(1<<20)))
	}
	return status.New(codes.ResourceExhausted, fmt.Sprintf("the gateway has been holding threads weighing "+
		"%g MiB, its bound, for their readers for %s: try again in a moment", float64(e.room)/(1<<20), e.wait))
}
