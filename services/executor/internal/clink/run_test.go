package clink

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// daemonDir, when set, makes this test binary the daemon a CLI of
// TestAProcessLeftHoldingTheOutputDoesNotHoldTheRun leaves: in a session
// of its own, holding the CLI's output, it records its pid there, lives
// 20 s, and says when it ends. (No setsid program is needed.)
const daemonDir = "CLINK_TEST_DAEMON_DIR"

func init() {
	dir := os.Getenv(daemonDir)
	if dir == "" {
		return
	}
	_, _ = syscall.Setsid()
	pid := filepath.Join(dir, "daemon.pid")
	_ = os.WriteFile(pid+".new", []byte(strconv.Itoa(os.Getpid())), 0o600)
	_ = os.Rename(pid+".new", pid)
	time.Sleep(20 * time.Second) // a daemon's life, not a test's wait
	_ = os.WriteFile(filepath.Join(dir, "daemon.done"), nil, 0o600)
	os.Exit(0)
}

// TestAProcessLeftHoldingTheOutputDoesNotHoldTheRun: a CLI that leaves a
// process of its own session behind (a daemon, a language server) with
// its stdout open made the run wait for that process, past the CLI's exit
// and past the timeout, which it then blamed; its answer was lost.
func TestAProcessLeftHoldingTheOutputDoesNotHoldTheRun(t *testing.T) {
	t.Parallel()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		then    string // what the CLI does once it has left the daemon
		timeout int
		want    error
	}{
		"the CLI answers and exits":  {then: "echo 'the answer'; exit 0", timeout: 30},
		"the CLI outlives its limit": {then: "exec sleep 30", timeout: 1, want: ErrTimeout},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pidFile := filepath.Join(dir, "daemon.pid")
			doneFile := filepath.Join(dir, "daemon.done")
			script := "#!/bin/sh\ncat >/dev/null\n" + daemonDir + "='" + dir + "' '" + self + "' &\n" +
				"while [ ! -s " + pidFile + " ]; do sleep 0.01; done\n" + tc.then + "\n"
			cli := filepath.Join(dir, "daemoncli")
			if err := os.WriteFile(cli, []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			run, err := Execute(context.Background(), Client{Name: "daemoncli", TimeoutSeconds: tc.timeout},
				[]string{cli}, "hi", dir)
			raw, readErr := os.ReadFile(pidFile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
			if readErr != nil || pid <= 0 {
				t.Fatalf("the daemon's pid: %q %v", raw, readErr)
			}
			_, statErr := os.Stat(doneFile)
			_ = syscall.Kill(-pid, syscall.SIGKILL) // the daemon's session, its sleep with it
			if statErr == nil {
				t.Error("the run ended only once the daemon had")
			}
			switch {
			case tc.want != nil && !errors.Is(err, tc.want):
				t.Errorf("err = %v, want %v", err, tc.want)
			case tc.want == nil && (err != nil || strings.TrimSpace(run.Stdout) != "the answer"):
				t.Errorf("run %+v, err %v; want the answer", run, err)
			}
		})
	}
}

// TestWhatTheCLILeftInItsGroupEndsWithIt: a process the CLI started in its
// own group and left behind (a background job, a server it spawned) is
// killed once the CLI exits, as at a timeout; with the run no longer held
// by its output, it was left running.
func TestWhatTheCLILeftInItsGroupEndsWithIt(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	pidFile := filepath.Join(dir, "child.pid")
	script := "#!/bin/sh\ncat >/dev/null\nsleep 20 &\necho $! > " + pidFile + "\necho 'the answer'\n"
	cli := filepath.Join(dir, "cli")
	if err := os.WriteFile(cli, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	run, err := Execute(context.Background(), Client{Name: "cli", TimeoutSeconds: 30}, []string{cli}, "hi", dir)
	if err != nil || strings.TrimSpace(run.Stdout) != "the answer" {
		t.Fatalf("run %+v, err %v; want the answer", run, err)
	}
	raw, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(raw)))
	// A signal takes effect a moment after it is sent.
	deadline := time.NewTimer(5 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for running(pid) {
		select {
		case <-deadline.C:
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatal("the CLI's background job runs on after it")
		case <-tick.C:
		}
	}
}

// running reports whether process pid runs: not gone, nor a zombie no one
// has reaped (a container's first process may reap none).
func running(pid int) bool {
	stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(stat), ") ")
	return rest != "" && rest[0] != 'Z' && rest[0] != 'X'
}
