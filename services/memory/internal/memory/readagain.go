package memory

import (
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
// most readAttempts times; what names what it reads, for the error that
// says it gave up.
func ReadAgain[T any](what func() string, read func() (T, error)) (T, error) {
	for range readAttempts - 1 {
		if v, err := read(); !errors.Is(err, ErrWrittenAnew) {
			return v, err
		}
	}
	v, err := read()
	if errors.Is(err, ErrWrittenAnew) {
		return v, fmt.Errorf("%w: %s was written anew during each of %d reads, or its turns do not match its "+
			"head; try again", ErrUnavailable, what(), readAttempts)
	}
	return v, err
}
