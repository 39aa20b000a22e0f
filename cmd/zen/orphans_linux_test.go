package main

import (
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

// builtZenEnv names, for a test binary a test starts, the zen binary its
// parent built, so that it need not build one of its own.
const builtZenEnv = "ZEN_E2E_BUILT_ZEN"

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
	waitFor(t, 10*time.Second, fmt.Sprintf("zen (pid %d) to die with its test binary", pid), func() bool {
		return errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
	})
}
