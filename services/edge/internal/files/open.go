package files

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// A path is checked (Resolve, checkFile) and then read, and another
// process that can rename entries under a root may change what it names
// in between: a directory on the way swapped for a link out of the roots,
// the file for a FIFO, which would hold the read until a writer came, or
// for a larger file. openChecked opens the very path that was checked,
// with no link on the way (one there now was put there since), and checks
// what it opened, by its descriptor, before a byte is read; readAtMost
// never reads past the limit, however the file grows.

// openFlags open a file to read without waiting: a FIFO opened blocking
// waits for a writer.
const openFlags = os.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NONBLOCK | syscall.O_NOCTTY

// errMoved is a path that changed between its checks and its read.
var errMoved = errors.New("a link appeared on its path after zen checked it")

// openChecked opens resolved, a path without links that label's checks
// passed, to read it: a regular file of at most limit bytes, not one of
// zen's own files. What stops it is a *Skipped under label, but for zen's
// own file, which is denied (ErrDenied).
func (pol Policy) openChecked(label, resolved string, limit int64) (*os.File, fs.FileInfo, error) {
	f, err := openWithoutLinks(resolved)
	if errors.Is(err, errMoved) {
		return nil, nil, &Skipped{Path: label, Reason: "changed while zen read it: " + errMoved.Error()}
	}
	if err != nil {
		return nil, nil, statFailure(label, err)
	}
	info, err := f.Stat()
	switch {
	case err != nil:
		err = statFailure(label, err)
	case !info.Mode().IsRegular():
		err = notAFile(label)
	case info.Size() > limit:
		err = tooLargeFor(label, info.Size(), limit)
	case pol.ownIdentity(info):
		err = fmt.Errorf("%w: %s %s", ErrDenied, label, ownReason)
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// readAtMost reads f to its end, or fails as too large (a *Skipped under
// label) once it holds more than limit bytes: a file may grow after its
// size was read.
func readAtMost(f *os.File, label string, limit int64) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, statFailure(label, err)
	}
	if int64(len(raw)) > limit {
		return nil, &Skipped{Path: label, Reason: fmt.Sprintf("grew past the %d-byte limit for one file while "+
			"zen read it", limit)}
	}
	return raw, nil
}

// ownIdentity tells whether info is one of zen's own files, under any name.
func (p Policy) ownIdentity(info fs.FileInfo) bool {
	for _, o := range p.own {
		if oi, err := os.Stat(o); err == nil && os.SameFile(info, oi) {
			return true
		}
	}
	return false
}
