//go:build unix

package refused

import (
	"fmt"
	"syscall"
	"testing"
)

// Addr is a loopback host:port that refuses connections until t ends: a
// socket bound to the port and never listening holds it, so no listener
// can take it.
func Addr(t testing.TB) string {
	t.Helper()
	// Close-on-exec, set under the fork lock as package net does, so that
	// no process a test starts inherits the socket.
	syscall.ForkLock.RLock()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err == nil {
		syscall.CloseOnExec(fd)
	}
	syscall.ForkLock.RUnlock()
	if err != nil {
		t.Fatalf("refused: socket: %v", err)
	}
	t.Cleanup(func() { _ = syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("refused: bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("refused: getsockname: %v", err)
	}
	in, ok := sa.(*syscall.SockaddrInet4)
	if !ok {
		t.Fatalf("refused: bound to %T, want an IPv4 address", sa)
	}
	return fmt.Sprintf("127.0.0.1:%d", in.Port)
}
