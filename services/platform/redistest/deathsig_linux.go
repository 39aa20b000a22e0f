package redistest

import "syscall"

// diesWithTest has the server killed with the test binary, should it die
// without its cleanups (a panic, a timeout), so that none outlives it.
// Linux sends the signal when the thread that started the server exits,
// which Go does only for a goroutine that ends locked to its thread: none
// here does.
func diesWithTest() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
