package logfile

import (
	"fmt"
	"os"
)

// openPrivate opens path to append to, creating it readable by the user
// alone, and returns it with its size. Whoever can write to the directory
// could have put something at path before zen's first run or between two
// rotations, so it refuses, rather than writes through, anything but the
// user's own plain file: a symbolic link (to ~/.bashrc, say, which would
// then collect log lines that quote what clients and providers send), a
// FIFO or device, a file of another user, or one with more hard links. An
// existing file that others may read is made private.
func openPrivate(path string) (*os.File, int64, error) {
	// Checked before opening too, so that a FIFO is refused without being
	// opened and a system without noFollow still refuses a link.
	if info, err := os.Lstat(path); err == nil {
		if problem := notPlain(info); problem != "" {
			return nil, 0, refusal(path, problem)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("logfile: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("logfile: %w", err)
	}
	problem := notPlain(info)
	if problem == "" {
		problem = notOwned(info, os.Geteuid())
	}
	if problem != "" {
		f.Close()
		return nil, 0, refusal(path, problem)
	}
	if info.Mode().Perm()&0o077 != 0 {
		if err := f.Chmod(0o600); err != nil {
			f.Close()
			return nil, 0, fmt.Errorf("logfile: %s can be read by other users and could not be made private: %w", path, err)
		}
	}
	return f, info.Size(), nil
}

// notPlain says what info is when it is not a regular file, or "".
func notPlain(info os.FileInfo) string {
	switch m := info.Mode(); {
	case m&os.ModeSymlink != 0:
		return "is a symbolic link"
	case m.IsDir():
		return "is a directory"
	case !m.IsRegular():
		return fmt.Sprintf("is not a regular file (mode %v)", m)
	}
	return ""
}

// refusal is the error for a path zen will not log to.
func refusal(path, problem string) error {
	return fmt.Errorf("logfile: will not log to %s: it %s, and a log goes only to the user's own regular file; "+
		"remove it, or log to a file in a directory only you can write", path, problem)
}
