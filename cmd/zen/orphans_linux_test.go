package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// orphanChildEnv makes TestNoZenOutlivesItsTestBinary's child start a zen
// and die without its cleanups.
const orphanChildEnv = "ZEN_E2E_ORPHAN_CHILD"

// A test binary that dies without running its cleanups (a panic, a
// timeout, os.Exit) takes the zen it started with it: a zen left running
// would hold ports and CPU under the next tests and benchmarks.
func TestNoZenOutlivesItsTestBinary(t *testing.T) {
	if os.Getenv(orphanChildEnv) != "" {
		p := startZen(t, map[string]string{"ZEN_DATA_DIR": t.TempDir()}, []string{"mcp"}, serveArgs()...)
		fmt.Printf("zen pid %d\n", p.cmd.Process.Pid)
		_ = os.RemoveAll(filepath.Dir(zenHome)) // TestMain's, which os.Exit skips with the cleanups
		os.Exit(3)
	}
	t.Parallel()
	child := exec.Command(os.Args[0], "-test.run=^TestNoZenOutlivesItsTestBinary$")
	child.Env = append(os.Environ(), orphanChildEnv+"=1", builtZenEnv+"="+zenBin)
	out, err := child.Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("the child test binary ended with %v, want exit status 3:\n%s", err, out)
	}
	_, after, found := strings.Cut(string(out), "zen pid ")
	pid, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(after, "\n", 2)[0]))
	if !found || err != nil {
		t.Fatalf("the child did not say which zen it started:\n%s", out)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) }) // should the test fail
	waitFor(t, 10*time.Second, fmt.Sprintf("zen (pid %d) to die with its test binary", pid), func() bool {
		return dead(pid)
	})
}

// dead tells whether process pid has ended: gone, or a zombie that its
// new parent (init, once the test binary died) has not reaped yet.
func dead(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	_, after, _ := strings.Cut(string(stat[bytes.LastIndexByte(stat, ')')+1:]), " ")
	return strings.HasPrefix(after, "Z")
}
