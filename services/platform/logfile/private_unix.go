//go:build unix

package logfile

import (
	"fmt"
	"os"
	"syscall"
)

// noFollow makes the open fail on a symbolic link at the path, closing the
// gap between openPrivate's check and its open. O_NONBLOCK keeps a FIFO
// put there in that gap from blocking the open until a reader comes (the
// file is then refused); it changes nothing for a regular file.
const noFollow = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// notOwned says why an open file is not the user's own, or "": it belongs
// to another user, or has hard links elsewhere that would see every line.
func notOwned(info os.FileInfo, uid int) string {
	st, ok := info.Sys().(*syscall.Stat_t)
	switch {
	case !ok:
		return ""
	case int(st.Uid) != uid:
		return fmt.Sprintf("belongs to user %d, not to zen's user %d", st.Uid, uid)
	case st.Nlink != 1:
		return fmt.Sprintf("has %d hard links, so each line would land in another file too", st.Nlink)
	}
	return ""
}

// dirRisk says why a log in dir is at risk, or is nil: a directory every
// user may write to, without the sticky bit that stops them renaming or
// removing files they do not own, lets them swap the log or its older
// files for their own at any rotation.
func dirRisk(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return nil // Open just used it; nothing to say about one that is gone
	}
	if m := info.Mode(); m&0o002 != 0 && m&os.ModeSticky == 0 {
		return fmt.Errorf("the log's directory %s (mode %v) can be written by every user and is not sticky, "+
			"so another user can replace the log file: log to a file in a directory only you can write", dir, m.Perm())
	}
	return nil
}
