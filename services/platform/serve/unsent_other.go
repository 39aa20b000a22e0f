//go:build !linux

package serve

import "net"

// keepLittleUnsent does nothing here: only Linux's sockets are bounded.
func keepLittleUnsent(net.Conn) {}
