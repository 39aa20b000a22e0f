//go:build !linux

package main

import "syscall"

// diesWithTest is nil where the kernel cannot tie a process's life to its
// parent's: a zen then outlives a test binary that dies without its
// cleanups.
func diesWithTest() *syscall.SysProcAttr { return nil }
