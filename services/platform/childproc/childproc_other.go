//go:build !linux

package childproc

import "syscall"

// DiesWithParent is nil where the kernel cannot tie a process's life to
// its parent's: a child then outlives a test binary that dies without its
// cleanups.
func DiesWithParent() *syscall.SysProcAttr { return nil }
