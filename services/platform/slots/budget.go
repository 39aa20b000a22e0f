package slots

import (
	"context"
	"errors"
	"sync"
	"time"

	"golang.org/x/sync/semaphore"
)

// ErrOverBudget is Budget.Take's answer when the weight it asked for did
// not come free within the wait.
var ErrOverBudget = errors.New("slots: the process's budget for this work stayed taken")

// Budget bounds the weight of one kind of work a process runs at once,
// whoever it is for: per-client slots bound each client, and so the whole
// only by the number of clients. Waiters are served in the order they
// came, so that a heavy piece of work is not passed over for ever by light
// ones.
type Budget struct {
	max int64
	sem *semaphore.Weighted
}

// NewBudget allows work weighing size in all at once.
func NewBudget(size int64) *Budget { return &Budget{max: size, sem: semaphore.NewWeighted(size)} }

// Max is the weight the budget allows at once.
func (b *Budget) Max() int64 { return b.max }

// Take waits until weight is free, up to wait, or until ctx ends. Work
// heavier than the whole budget takes all of it, so that it runs alone
// rather than never.
func (b *Budget) Take(ctx context.Context, weight int64, wait time.Duration) (release func(), err error) {
	weight = max(min(weight, b.max), 1)
	// Before the wait's context: with no wait left, Acquire would refuse
	// even weight that is free.
	if b.sem.TryAcquire(weight) {
		return b.releaser(weight), nil
	}
	waitCtx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := b.sem.Acquire(waitCtx, weight); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, ErrOverBudget
	}
	return b.releaser(weight), nil
}

func (b *Budget) releaser(weight int64) func() {
	var once sync.Once
	return func() { once.Do(func() { b.sem.Release(weight) }) }
}
