package serve

import (
	"net"

	"golang.org/x/sys/unix"
)

// keepLittleUnsent holds what the kernel keeps unsent on c to UnsentBytes.
func keepLittleUnsent(c net.Conn) {
	tcp, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	raw, err := tcp.SyscallConn()
	if err != nil {
		return
	}
	_ = raw.Control(func(fd uintptr) {
		_ = unix.SetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT, UnsentBytes)
	})
}
