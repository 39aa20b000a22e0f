//go:build unix

package refused

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

func TestAddrRefuses(t *testing.T) {
	t.Parallel()
	addr := Addr(t)
	for range 3 {
		conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			conn.Close()
			t.Fatalf("dial %s succeeded, want it refused", addr)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("dial %s: %v, want connection refused", addr, err)
		}
	}
}

// TestNoListenerTakesTheAddress: while the test runs, listening on the
// address fails, so nothing can answer there.
func TestNoListenerTakesTheAddress(t *testing.T) {
	t.Parallel()
	addr := Addr(t)
	if lis, err := net.Listen("tcp", addr); err == nil {
		lis.Close()
		t.Fatalf("a listener took %s", addr)
	}
}
