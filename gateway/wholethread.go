package gateway

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	perclient "github.com/zenmcp/zen/services/platform/slots"
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

// wholeThread reads thread id whole, once the gateway has room for what it
// weighs: memory's basic view of the thread weighs it, then the full one
// is read. The caller holds the room, with release, for as long as it
// holds the thread; cost is how many times its weight it takes to hold it
// (the generated route's JSON, built whole, takes several).
func (p threadPaths) wholeThread(ctx context.Context, id string, cost int64) (*memoryv1.GetThreadResponse,
	func(), error) {
	release, err := p.roomFor(ctx, id, cost)
	if err != nil {
		return nil, nil, err
	}
	got, err := p.memory.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id})
	if err != nil {
		release()
		return nil, nil, err
	}
	return got, release, nil
}

// roomFor weighs thread id by memory's basic view and waits for room for
// cost times its weight, up to roomWait.
func (p threadPaths) roomFor(ctx context.Context, id string, cost int64) (func(), error) {
	basic, err := p.memory.GetThread(ctx, &memoryv1.GetThreadRequest{ThreadId: id,
		View: memoryv1.ThreadView_THREAD_VIEW_BASIC})
	if err != nil {
		return nil, err
	}
	release, err := p.room.Take(ctx, cost*basic.GetWeight(), p.roomWait)
	if errors.Is(err, perclient.ErrOverBudget) {
		return nil, &noRoom{room: p.room.Max(), wait: p.roomWait}
	}
	return release, err
}

// noRoom refuses a read that found no room within wait.
type noRoom struct {
	room int64
	wait time.Duration
}

func (e *noRoom) Error() string { return e.GRPCStatus().Message() }

// GRPCStatus is what writeStatus answers: 429.
func (e *noRoom) GRPCStatus() *status.Status {
	return status.New(codes.ResourceExhausted, fmt.Sprintf("the gateway has been holding threads weighing "+
		"%d MiB, its bound, for their readers for %s: try again in a moment", e.room>>20, e.wait))
}

// writeRefusal answers err, and, when it is noRoom, when to try again.
func writeRefusal(w http.ResponseWriter, err error) {
	if nr, ok := errors.AsType[*noRoom](err); ok {
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(nr.wait.Seconds()))))
	}
	writeStatus(w, err)
}
