//go:build !linux

package redistest

import "syscall"

// diesWithTest is nil where the kernel cannot tie a process's life to its
// parent's: a server then outlives a test binary that dies without its
// cleanups.
func diesWithTest() *syscall.SysProcAttr { return nil }
