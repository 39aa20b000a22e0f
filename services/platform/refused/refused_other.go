//go:build !unix

package refused

import (
	"net"
	"testing"
)

// Addr is a loopback host:port that refused connections when it was made:
// the port of a listener opened and closed at once. Off Unix nothing holds
// the port after, so a listener opened later may take it.
func Addr(t testing.TB) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("refused: listen: %v", err)
	}
	addr := lis.Addr().String()
	_ = lis.Close()
	return addr
}
