//go:build linux

package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
	"github.com/zenmcp/zen/services/platform/serve"
	"golang.org/x/sys/unix"
)

// The gateway's connections hold little of an answer in the kernel
// (serve.LittleUnsent): else the send buffer grows to megabytes, and a
// slow reader's answer outlives the time each piece of it is given
// (serve.Paced). MCP's do not: it measured slower there, and an MCP
// answer is one small write. Read from zen's own end of each connection.
func TestServeHoldsLittleOfAGatewayAnswerUnsent(t *testing.T) {
	t.Parallel()
	p := startZen(t, fakeEnv(fakemodel.New(t)), []string{"mcp", "gateway"}, serveArgs()...)
	for _, tc := range []struct {
		listener string
		want     int
	}{
		{"gateway", serve.UnsentBytes},
		{"mcp", systemUnsentBound(t)},
	} {
		if got := unsentBound(t, p.cmd.Process.Pid, p.addr(tc.listener), "/healthz"); got != tc.want {
			t.Errorf("zen serve's %s connection: TCP_NOTSENT_LOWAT %d, want %d", tc.listener, got, tc.want)
		}
	}
}

// checkGatewayUnsent checks that the gateway pid serves on addr holds
// little of an answer unsent (TestLocalCluster's gateway member).
func checkGatewayUnsent(t *testing.T, pid int, addr string) {
	t.Helper()
	if got := unsentBound(t, pid, addr, "/healthz"); got != serve.UnsentBytes {
		t.Errorf("the gateway's connection: TCP_NOTSENT_LOWAT %d, want %d", got, serve.UnsentBytes)
	}
}

// systemUnsentBound is the TCP_NOTSENT_LOWAT of a connection accepted
// here with nothing set on it.
func systemUnsentBound(t *testing.T) int {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	dialed, err := net.Dial("tcp", lis.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer dialed.Close()
	accepted, err := lis.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer accepted.Close()
	raw, err := accepted.(*net.TCPConn).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var v int
	var getErr error
	if err := raw.Control(func(fd uintptr) {
		v, getErr = unix.GetsockoptInt(int(fd), unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
	}); err != nil || getErr != nil {
		t.Fatalf("TCP_NOTSENT_LOWAT of an accepted connection: %v %v", err, getErr)
	}
	if v == serve.UnsentBytes {
		t.Fatalf("this system's own TCP_NOTSENT_LOWAT is serve.UnsentBytes: the test cannot tell them apart")
	}
	return v
}

// unsentBound opens a connection to addr, has pid answer a GET of path on
// it, and returns the TCP_NOTSENT_LOWAT of pid's end of that connection.
func unsentBound(t *testing.T, pid int, addr, path string) int {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// An answer says the connection was accepted, and so set up.
	fmt.Fprintf(conn, "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n", path, addr)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("GET %s on %s: %v", path, addr, err)
	}
	resp.Body.Close()
	fd := peerSocket(t, pid, conn)
	defer unix.Close(fd)
	v, err := unix.GetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NOTSENT_LOWAT)
	if err != nil {
		t.Fatalf("TCP_NOTSENT_LOWAT of pid %d's end of %s: %v", pid, addr, err)
	}
	return v
}

// peerSocket is a descriptor, in this process, of pid's end of conn: the
// socket /proc/pid/net/tcp lists with conn's addresses the other way
// round, found among pid's descriptors and taken with pidfd_getfd.
func peerSocket(t *testing.T, pid int, conn net.Conn) int {
	t.Helper()
	local, remote := conn.RemoteAddr().(*net.TCPAddr), conn.LocalAddr().(*net.TCPAddr)
	if local.IP.To4() == nil || remote.IP.To4() == nil {
		t.Fatalf("%v to %v: only IPv4 connections are looked up (in /proc/net/tcp)", local, remote)
	}
	inode := ""
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) > 9 && f[1] == procAddr(local) && f[2] == procAddr(remote) {
			inode = f[9]
		}
	}
	if inode == "" {
		t.Fatalf("no socket from %v to %v in pid %d's /proc/net/tcp", local, remote, pid)
	}
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if link, _ := os.Readlink(filepath.Join(dir, e.Name())); link != "socket:["+inode+"]" {
			continue
		}
		target, err := strconv.Atoi(e.Name())
		if err != nil {
			t.Fatal(err)
		}
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			t.Fatalf("pidfd_open(%d): %v", pid, err)
		}
		defer unix.Close(pidfd)
		fd, err := unix.PidfdGetfd(pidfd, target, 0)
		if err != nil {
			t.Fatalf("pidfd_getfd(%d, %d): %v", pid, target, err)
		}
		return fd
	}
	t.Fatalf("pid %d holds no descriptor of socket %s", pid, inode)
	return -1
}

// procAddr is a as /proc/net/tcp writes an IPv4 address and port.
func procAddr(a *net.TCPAddr) string {
	ip := a.IP.To4()
	return fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], a.Port)
}
