package logfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// File is a log file that rotates by size. It is safe for concurrent use,
// and each Write lands whole in one file.
type File struct {
	mu   sync.Mutex
	path string
	max  int64 // bytes a file may reach
	keep int   // older files kept: path.1 (newest) to path.keep
	f    *os.File
	// size is what this process knows the file holds: its size when opened
	// plus what it wrote since. Other processes logging to the same file
	// are seen when this one reaches the limit (see full).
	size int64
	// dirProblem is what Open found wrong with the directory (DirProblem).
	dirProblem error
}

// Open appends to path, creating it and its directories if need be, and
// keeps files of at most maxBytes, with keep older ones beside it. The
// file and new directories are readable by the user alone: a log names
// the user's files and threads. A file already at path must be one the
// user owns (see openPrivate).
func Open(path string, maxBytes int64, keep int) (*File, error) {
	if maxBytes <= 0 || keep < 1 {
		return nil, fmt.Errorf("logfile: want a positive size and at least one older file, got %d bytes and %d files",
			maxBytes, keep)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	l := &File{path: path, max: maxBytes, keep: keep}
	if err := l.open(); err != nil {
		return nil, err
	}
	l.dirProblem = dirRisk(filepath.Dir(path))
	return l, nil
}

// DirProblem says why the file's directory puts the log at risk (others
// may replace the file there), or is nil. Open asks once; the caller logs
// it, since the logger writes to this file.
func (l *File) DirProblem() error { return l.dirProblem }

// open opens the file at the path as openPrivate does, as the one this
// File writes to.
func (l *File) open() error {
	f, size, err := openPrivate(l.path)
	if err != nil {
		return err
	}
	l.f, l.size = f, size
	return nil
}

// Write appends p, first rotating the file when p would take it past the
// limit. A line longer than the limit gets a file of its own.
func (l *File) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return 0, os.ErrClosed
	}
	if l.size > 0 && l.size+int64(len(p)) > l.max && l.full(int64(len(p))) {
		if err := l.rotate(); err != nil {
			// Rather the line in a full file than lost; the next attempt
			// waits for another limit's worth of lines.
			l.size = 0
			fmt.Fprintf(os.Stderr, "zen: rotate the log file %s: %v\n", l.path, err)
		}
	}
	n, err := l.f.Write(p)
	l.size += int64(n)
	return n, err
}

// full checks the file on disk once this process's count says it is full:
// another process may have rotated it (then this one moves to the new
// file), or written to it too.
func (l *File) full(next int64) bool {
	onDisk, err := os.Lstat(l.path) // a link put there is not this file: rotating replaces it
	mine, err2 := l.f.Stat()
	if err != nil || err2 != nil {
		return err2 == nil // the path is gone: rotating starts a new file
	}
	if !os.SameFile(onDisk, mine) {
		if old := l.f; l.open() == nil {
			old.Close()
		}
		return l.size > 0 && l.size+next > l.max
	}
	l.size = mine.Size()
	return l.size+next > l.max
}

// rotate moves path.N to path.N+1, dropping the oldest, path to path.1,
// and starts a new file.
func (l *File) rotate() error {
	files := Files(l.path, l.keep)
	for i := len(files) - 2; i >= 0; i-- {
		if err := os.Rename(files[i], files[i+1]); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	old := l.f
	if err := l.open(); err != nil {
		return err
	}
	return old.Close()
}

// Files are the files a log at path rotates through, keeping keep older
// ones: path, then path.1 (the newest older one) to path.keep.
func Files(path string, keep int) []string {
	out := []string{path}
	for i := 1; i <= keep; i++ {
		out = append(out, fmt.Sprintf("%s.%d", path, i))
	}
	return out
}

// Close closes the file; later writes fail.
func (l *File) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// Path is the file's name.
func (l *File) Path() string { return l.path }
