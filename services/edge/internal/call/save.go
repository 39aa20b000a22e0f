package call

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/zenmcp/zen/services/platform/origin"
	"github.com/zenmcp/zen/services/platform/reply"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// saveWindow bounds how long an exchange's save is retried when the call
// has no deadline of its own: long enough for a memory replica to be
// replaced in a rolling update, short enough that the client still gets
// its answer (with a note that it was not saved) while it waits.
const saveWindow = 30 * time.Second

// retryMemory runs one of the memory calls that keep an answer (rpc: the
// thread's creation, the append) until it succeeds, fails in a way a retry
// cannot change, or the call's deadline (at most saveWindow from now)
// passes. By the time it runs, the model has answered: giving up
// at the first hiccup would throw that answer's continuation away.
//
// Only Unavailable is retried: memory draining or restarting, a replica
// going away (the next attempt may reach another), its store briefly
// unreachable. Retries wait for a ready connection instead of failing while
// one is being re-established. Every attempt at an append carries the same
// exchange id, so one that memory had in fact stored is kept once; a thread
// created by an attempt whose answer was lost is left unused, to expire.
func (r *Runner) retryMemory(ctx context.Context, rpc string,
	do func(context.Context, ...grpc.CallOption) error) error {
	ctx, cancel := context.WithTimeout(ctx, saveWindow)
	defer cancel()
	backoff := 50 * time.Millisecond
	var last error // the latest Unavailable, which says more than "deadline exceeded"
	var opts []grpc.CallOption
	for {
		err := do(ctx, opts...)
		switch {
		case err == nil:
			return nil
		case status.Code(err) == codes.Unavailable:
			if last == nil {
				r.logger.WarnContext(ctx, "memory unavailable; retrying", "rpc", rpc, "err", err)
			}
			last = err
		case last != nil && outOfTime(ctx):
			// Out of time after memory was unavailable: that is the reason to
			// report. gRPC answers DeadlineExceeded as soon as the deadline
			// has passed by the clock, before ctx's own timer has run.
			return last
		default:
			return err
		}
		// Jitter keeps the edges of a cluster from retrying in step.
		wait := backoff/2 + rand.N(backoff/2+1)
		select {
		case <-ctx.Done():
			return last
		case <-time.After(wait):
		}
		backoff = min(2*backoff, time.Second)
		opts = []grpc.CallOption{grpc.WaitForReady(true)}
	}
}

// outOfTime reports whether ctx has ended or its deadline has passed.
func outOfTime(ctx context.Context) bool {
	d, ok := ctx.Deadline()
	return ctx.Err() != nil || ok && !time.Now().Before(d)
}

// notContinued says why out's conversation cannot go on from it: its
// continuation_error, and a conversation_ready the tool set, false.
func notContinued(out *reply.Reply, why string) {
	out.Metadata.ContinuationError = why
	if _, ok := out.Metadata.Fields["conversation_ready"]; ok {
		out.Metadata.Fields["conversation_ready"] = false
	}
}

// saveFailure says why an answer could not be saved, as far as it helps.
func saveFailure(err error) string {
	const lost = "this answer could not be saved, so the conversation cannot be continued"
	st := status.Convert(err)
	if st.Code() == codes.Aborted {
		return st.Message() // a step another overtook: memory's words say what to do
	}
	switch reason, _ := origin.Of(err); reason {
	case origin.StoreFull:
		return lost + ": zen's memory store is full, and stores nothing more until its operator makes room"
	case origin.ClientFull:
		return lost + ": " + st.Message() // what the client's threads hold, and how to make room
	}
	switch st.Code() {
	case codes.InvalidArgument, codes.FailedPrecondition: // the request, or the thread it would go in
		return lost + ": " + st.Message()
	case codes.Unavailable:
		return lost + ": zen's memory is unavailable right now"
	case codes.DeadlineExceeded:
		return lost + ": zen's memory did not answer in time"
	case codes.NotFound:
		return lost + ": the thread expired or was deleted meanwhile"
	case codes.DataLoss:
		return lost + ": " + st.Message()
	}
	return lost
}

// isNotFound tells a missing thread from a failing memory service.
func isNotFound(err error) bool { return status.Code(err) == codes.NotFound }

// noProvider is the router's message when its answer is that no model
// provider is configured, and whether it is: the router marks that answer
// (origin.NoProvider), so no other refusal passes for setup help.
func noProvider(err error) (string, bool) {
	if reason, _ := origin.Of(err); reason != origin.NoProvider {
		return "", false
	}
	return status.Convert(err).Message(), true
}
