package memory

import (
	"context"
	"errors"
	"fmt"
)

// ErrWrittenAnew is a store's read that found the thread written anew
// between two of its parts (its head and its turns): the read is made
// again (ReadAgain).
var ErrWrittenAnew = errors.New("the thread was written anew while it was read")

// readAttempts bounds how often a read is made again for ErrWrittenAnew.
const readAttempts = 5

// ReadAgain runs read until it does not find its thread written anew, at
// most readAttempts times, and while ctx lasts.
func ReadAgain[T any](ctx context.Context, read func() (T, error)) (T, error) {
	var v T
	var err error
	for range readAttempts {
		if v, err = read(); !errors.Is(err, ErrWrittenAnew) {
			return v, err
		}
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
	}
	return v, fmt.Errorf("%w: %w, in each of %d reads; try again", ErrUnavailable, err, readAttempts)
}
