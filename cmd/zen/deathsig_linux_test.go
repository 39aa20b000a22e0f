package main

import "syscall"

// diesWithTest has a process a test starts killed with the test binary,
// should it die without its cleanups (a panic, a timeout), so that no zen
// outlives its test on the machine. Linux sends the signal when the thread
// that started the process exits, which Go does only for a goroutine that
// ends locked to its thread: none here does.
func diesWithTest() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
