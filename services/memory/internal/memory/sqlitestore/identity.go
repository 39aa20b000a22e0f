package sqlitestore

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"syscall"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// fileID is which file a path names: its device and inode.
type fileID struct{ dev, ino uint64 }

// idOf is the file at path now (fs.ErrNotExist when there is none), as
// stat tells it.
func idOf(stat func(string) (fs.FileInfo, error), path string) (fileID, error) {
	info, err := stat(path)
	if err != nil {
		return fileID{}, err
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, errors.New("this system gives no file identity")
	}
	return fileID{dev: uint64(st.Dev), ino: st.Ino}, nil // Dev is narrower on some systems
}

// GoneError is a database file removed or replaced while the store had it
// open: what the store wrote would go to a file no one can open again.
type GoneError struct{ Path string }

func (e *GoneError) Error() string {
	return "the database file " + e.Path + " was removed or replaced while zen ran: what zen wrote now would be " +
		"lost, so it writes nothing more; restart zen to open the file at that path"
}

// Ping checks that the database is still the file at its path, as opened
// (the memory role runs it every few seconds). Once it is not, the store
// refuses every write and says so in its warnings: the path may have been
// removed (a reset) or replaced (a restored copy), and either way the
// threads written since would vanish at the next start.
//
// A check that cannot tell (a stat that fails otherwise than for a missing
// file: an I/O error, a permission) fails without that verdict, and the
// next may pass.
func (s *Store) Ping(context.Context) error {
	if s.gone() {
		return &GoneError{Path: s.goneName()}
	}
	for i, name := range s.files() {
		id, err := idOf(s.stat, name)
		switch {
		case errors.Is(err, fs.ErrNotExist) || err == nil && id != s.opened[i]:
			s.goneFile.Store(int32(i) + 1)
			return &GoneError{Path: name}
		case err != nil:
			return fmt.Errorf("check the database file %s: %w", name, err)
		}
	}
	return nil
}

// files are the database's files whose identity Ping checks: the file, and
// its write-ahead log, which holds every write since the last checkpoint
// and which SQLite keeps while the store has the file open.
func (s *Store) files() [2]string { return [2]string{s.path, s.path + "-wal"} }

// goneName is the file Ping found gone.
func (s *Store) goneName() string { return s.files()[s.goneFile.Load()-1] }

// gone reports whether Ping found the database or its log gone.
func (s *Store) gone() bool { return s.goneFile.Load() != 0 }

// openedFiles records which files the store opened.
func (s *Store) openedFiles() error {
	for i, name := range s.files() {
		id, err := idOf(s.stat, name)
		if err != nil {
			return err
		}
		s.opened[i] = id
	}
	return nil
}

// Warnings says what puts threads at risk: the database file gone.
func (s *Store) Warnings() []string {
	if !s.gone() {
		return nil
	}
	return []string{(&GoneError{Path: s.goneName()}).Error()}
}

// refuseWhenGone is the error a write gets once the file is gone, or nil.
func (s *Store) refuseWhenGone() error {
	if !s.gone() {
		return nil
	}
	return fmt.Errorf("%w: %w", memory.ErrGone, &GoneError{Path: s.goneName()})
}
