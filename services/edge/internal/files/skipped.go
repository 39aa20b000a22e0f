package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
)

// Skipped is a file a call goes on without, and why: it is missing,
// cannot be read, is not a regular file, is over MaxFileBytes, or did not
// fit the budget. The model reads one line for it and the agent finds it
// in the reply's metadata. As an error it is what Read and Resolve return
// for such a file; a path the policy refuses is never one (ErrDenied).
type Skipped struct {
	// Path is the path as the call gave it.
	Path string
	// Reason is worded for the model and the agent alike.
	Reason string
}

func (s *Skipped) Error() string { return s.Path + ": " + s.Reason }

// ReasonOverBudget is why a file of a workflow's final step was left out:
// the newer files named with it took the room (see NewestFirst).
const ReasonOverBudget = "did not fit in the model's file budget once the newer files named were in"

// ReasonNothingToRead is why a directory a call named added no file: a
// walk found none it reads in it.
const ReasonNothingToRead = "a directory holding no file zen reads (source and text files, outside hidden and " +
	"dependency directories, and links to such files inside it): name the files themselves"

// IsSkipped tells whether err is a file to go on without rather than a
// refusal.
func IsSkipped(err error) bool {
	var s *Skipped
	return errors.As(err, &s)
}

// asSkipped returns err's Skipped, for callers that list them.
func asSkipped(err error) (Skipped, bool) {
	var s *Skipped
	if errors.As(err, &s) {
		return *s, true
	}
	return Skipped{}, false
}

// checkFile is the one rule for a file a call can go on without: the file
// at resolved, which the call named as label, is a *Skipped under label
// when it is missing or unreadable, not a regular file, or over
// MaxFileBytes. A directory passes when dirs is set (a path named outright
// may be one; Read takes files only).
func checkFile(label, resolved string, dirs bool) (fs.FileInfo, error) {
	info, err := os.Stat(resolved)
	switch {
	case err != nil:
		return nil, statFailure(label, err)
	case dirs && info.IsDir():
		return info, nil
	case !info.Mode().IsRegular():
		return nil, notAFile(label)
	case info.Size() > MaxFileBytes:
		return nil, tooLarge(label, info.Size())
	}
	return info, nil
}

// statFailure is the Skipped for a failed look at path: missing, or
// unreadable for the reason the system gave.
func statFailure(path string, err error) *Skipped {
	if errors.Is(err, fs.ErrNotExist) {
		return &Skipped{Path: path, Reason: "not found"}
	}
	return &Skipped{Path: path, Reason: "cannot be read: " + cause(err)}
}

// tooLarge is the Skipped for a file over MaxFileBytes.
func tooLarge(path string, size int64) *Skipped { return tooLargeFor(path, size, MaxFileBytes) }

// tooLargeFor is the Skipped for a file over limit.
func tooLargeFor(path string, size, limit int64) *Skipped {
	return &Skipped{Path: path, Reason: fmt.Sprintf("%d bytes, over the %d-byte limit for one file", size, limit)}
}

func notAFile(path string) *Skipped { return &Skipped{Path: path, Reason: "not a regular file"} }

// cause is what the system said, without the operation and path the
// message already names.
func cause(err error) string {
	if inner := errors.Unwrap(err); inner != nil {
		return inner.Error()
	}
	return strings.TrimPrefix(err.Error(), "EvalSymlinks: ")
}
