package childproc

import "syscall"

// DiesWithParent is the attributes that have the child killed when the
// test binary dies. Linux sends the signal when the thread that started
// the child exits, which Go does only for a goroutine that ends locked to
// its thread: no test here does.
func DiesWithParent() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
