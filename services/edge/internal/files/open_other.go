//go:build unix && !linux

package files

import (
	"errors"
	"os"
	"syscall"
)

// openWithoutLinks opens path without following its last name, and
// refuses it (errMoved) when the path no longer resolves to itself or
// names another file than the one opened. Unlike Linux's, this narrows
// the window in which a directory on the way can be swapped for a link
// rather than closing it.
func openWithoutLinks(path string) (*os.File, error) {
	f, err := os.OpenFile(path, openFlags|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, syscall.ELOOP) {
		return nil, errMoved
	}
	if err != nil {
		return nil, err
	}
	opened, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, err
	}
	now, err := resolveAsFarAsExists(path)
	named, statErr := os.Lstat(path)
	if err != nil || statErr != nil || now != path || !os.SameFile(opened, named) {
		_ = f.Close()
		return nil, errMoved
	}
	return f, nil
}
