// Package redistest starts a real redis-server on loopback for a test and
// stops it when the test ends.
package redistest

import (
	"bufio"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/childproc"
)

// Server is a running redis-server.
type Server struct {
	Addr string
	cmd  *exec.Cmd
}

// URL is the redis:// URL zen's REDIS_URL takes.
func (s *Server) URL() string { return "redis://" + s.Addr }

// Persistence flags for StartWith.
var (
	// AOF fsyncs an append-only file on every write: what Redis
	// acknowledged survives a crash.
	AOF = []string{"--save", "", "--appendonly", "yes", "--appendfsync", "always"}
	// NoPersistence keeps nothing on disk: a restart loses every key.
	NoPersistence = []string{"--save", "", "--appendonly", "no"}
)

// Start runs redis-server with an append-only file fsynced on every write,
// so what it acknowledged survives a crash. Under -short the test is
// skipped; otherwise a missing redis-server fails it, naming the fix.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartWith(tb, AOF...)
}

// StartWith is Start with other flags: persistence flags such as
// NoPersistence, and any other redis-server takes (--maxmemory ...).
func StartWith(tb testing.TB, flags ...string) *Server {
	tb.Helper()
	if testing.Short() {
		tb.Skip("needs a real redis-server; skipped under -short")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatal("redis-server is not installed: run `make deps` (it installs the Debian package redis-server)")
	}
	dir := tb.TempDir()
	for attempt := 0; ; attempt++ {
		port, err := freePort()
		if err != nil {
			tb.Fatal(err)
		}
		s := &Server{Addr: fmt.Sprintf("127.0.0.1:%d", port)}
		args := append([]string{"--port", fmt.Sprint(port), "--bind", "127.0.0.1", "--dir", dir}, flags...)
		s.cmd = exec.Command(bin, append(args, "--daemonize", "no", "--logfile", "")...)
		s.cmd.SysProcAttr = childproc.DiesWithParent()
		stdout, _ := s.cmd.StdoutPipe()
		if err := s.cmd.Start(); err != nil {
			tb.Fatal(err)
		}
		if waitReady(stdout) {
			tb.Cleanup(func() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() })
			return s
		}
		_ = s.cmd.Process.Kill()
		_ = s.cmd.Wait()
		if attempt == 3 {
			tb.Fatalf("redis-server did not start on 127.0.0.1:%d", port)
		}
	}
}

// waitReady reads redis's log until it accepts connections, or it exits
// (another process took the port).
func waitReady(stdout interface{ Read([]byte) (int, error) }) bool {
	ready := make(chan bool, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "Ready to accept connections") {
				ready <- true
				for sc.Scan() { // keep draining so redis never blocks on its log
				}
				return
			}
		}
		ready <- false
	}()
	select {
	case ok := <-ready:
		return ok
	case <-time.After(20 * time.Second):
		return false
	}
}

func freePort() (int, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer lis.Close()
	return lis.Addr().(*net.TCPAddr).Port, nil
}

// Stop ends the server at once (SIGKILL), as a crash would.
func (s *Server) Stop() { _ = s.cmd.Process.Kill(); _ = s.cmd.Wait() }

// Restart starts the server again on the same port and directory, so it
// reloads its append-only file, when it keeps one.
func (s *Server) Restart(tb testing.TB) {
	tb.Helper()
	args := s.cmd.Args
	s.cmd = exec.Command(args[0], args[1:]...)
	s.cmd.SysProcAttr = childproc.DiesWithParent()
	stdout, _ := s.cmd.StdoutPipe()
	if err := s.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	if !waitReady(stdout) {
		tb.Fatalf("redis-server did not restart on %s", s.Addr)
	}
}
