package mcpserver

import (
	"context"
	"sync"
)

// AfterAnswer holds what a tool call leaves to be done once its answer is
// out: work its client need not wait for (the call's log line). A
// transport that writes the answer itself (fastcall) gives the call one,
// and runs it once the answer is flushed; under the SDK's session, which
// writes the answer after the handler returns, that work is done as the
// handler returns.
type AfterAnswer struct {
	mu   sync.Mutex
	work []func()
	ran  bool // work left from now on is done at once
}

type afterAnswerKey struct{}

// WithAfterAnswer is ctx carrying a new AfterAnswer, for a tool handler
// whose caller runs it once the answer is out.
func WithAfterAnswer(ctx context.Context) (context.Context, *AfterAnswer) {
	a := &AfterAnswer{}
	return context.WithValue(ctx, afterAnswerKey{}, a), a
}

// Run does what the call left, in the order it was left; what is left
// after it is done at once.
func (a *AfterAnswer) Run() {
	a.mu.Lock()
	work := a.work
	a.work, a.ran = nil, true
	a.mu.Unlock()
	for _, f := range work {
		f()
	}
}

// DoAfterAnswer leaves f to the AfterAnswer ctx carries, or does it now
// when ctx carries none or its answer is out already.
func DoAfterAnswer(ctx context.Context, f func()) {
	if a, ok := ctx.Value(afterAnswerKey{}).(*AfterAnswer); ok {
		a.mu.Lock()
		if !a.ran {
			a.work = append(a.work, f)
			a.mu.Unlock()
			return
		}
		a.mu.Unlock()
	}
	f()
}
