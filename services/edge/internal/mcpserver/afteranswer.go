package mcpserver

import "context"

// AfterAnswer holds what a tool call leaves to be done once its answer is
// out: work its client need not wait for (the call's log line). A
// transport that writes the answer itself (fastcall) gives the call one,
// and runs it once the answer is flushed; under the SDK's session, which
// writes the answer after the handler returns, that work is done as the
// handler returns.
type AfterAnswer struct{ work []func() }

type afterAnswerKey struct{}

// WithAfterAnswer is ctx carrying a new AfterAnswer, for a tool handler
// whose caller runs it once the answer is out. The handler runs on the
// caller's goroutine, so the two never touch it at once.
func WithAfterAnswer(ctx context.Context) (context.Context, *AfterAnswer) {
	a := &AfterAnswer{}
	return context.WithValue(ctx, afterAnswerKey{}, a), a
}

// Run does what the call left, in the order it was left.
func (a *AfterAnswer) Run() {
	work := a.work
	a.work = nil
	for _, f := range work {
		f()
	}
}

// DoAfterAnswer leaves f to the AfterAnswer ctx carries, or does it now
// when ctx carries none.
func DoAfterAnswer(ctx context.Context, f func()) {
	if a, ok := ctx.Value(afterAnswerKey{}).(*AfterAnswer); ok {
		a.work = append(a.work, f)
		return
	}
	f()
}
