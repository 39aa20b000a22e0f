package clink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// maxStream caps what is kept of a CLI's stdout and stderr each.
const maxStream = 10 << 20

// outputGrace is how long a run reads the output of a CLI that has exited
// (or was killed) while a process it left behind still holds it.
const outputGrace = time.Second

// Run is one finished CLI run.
type Run struct {
	Command    []string
	Stdout     string
	Stderr     string
	ReturnCode int
	Duration   time.Duration
}

// ErrTimeout is a run stopped at the client's timeout.
var ErrTimeout = errors.New("timed out")

// NotFoundError is a CLI whose executable is not on PATH.
type NotFoundError struct{ Client, Command string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("CLI '%s' is not installed: %q was not found on PATH. Install it, or configure its command "+
		"(CLI_CLIENTS_CONFIG_PATH)", e.Client, e.Command)
}

// Args builds the command line for a role; systemPrompt is passed by flag
// to the CLIs that take it that way (claude).
func Args(c Client, role Role, systemPrompt string) []string {
	args := []string{c.Command}
	switch ParserName(c) {
	case "gemini_json":
		args = append(args, "-o", "json")
	case "codex_jsonl":
		args = append(args, "exec")
	case "claude_json":
		args = append(args, "--print", "--output-format", "json")
	}
	args = append(args, c.SandboxArgs...)
	args = append(args, c.AdditionalArgs...)
	args = append(args, role.RoleArgs...)
	if ParserName(c) == "claude_json" && systemPrompt != "" {
		args = append(args, "--append-system-prompt", systemPrompt)
	}
	return args
}

// Execute runs the CLI with the prompt on stdin, in its own process group
// so a timeout or a cancellation kills it and everything it started.
func Execute(ctx context.Context, c Client, args []string, stdin, dir string) (*Run, error) {
	path, err := exec.LookPath(args[0])
	if err != nil {
		return nil, &NotFoundError{Client: c.Name, Command: args[0]}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, c.Timeout())
	defer cancel()
	cmd := exec.Command(path, args[1:]...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr capped
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.Dir = dir
	if c.WorkingDir != "" {
		cmd.Dir = c.WorkingDir
	}
	cmd.Env = Environment(c, os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A process the CLI leaves in a session of its own (a daemon, a
	// language server) keeps its output open and is out of the group's
	// reach: the run waited for it, past the CLI's exit and the timeout.
	cmd.WaitDelay = outputGrace
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("CLI '%s' could not start: %w", c.Name, err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	select {
	case waitErr = <-done:
		// What the CLI left in its group ends with it, as at a timeout. The
		// group outlives its leader while any member does, so while there
		// is one to kill its id is no other's.
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	case <-ctx.Done():
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
		if parent.Err() == nil {
			return nil, fmt.Errorf("CLI '%s' %w after %d seconds", c.Name, ErrTimeout, int(c.Timeout().Seconds()))
		}
		return nil, ctx.Err()
	}
	run := &Run{Command: args, Stdout: stdout.String(), Stderr: stderr.String(), Duration: time.Since(start)}
	var exit *exec.ExitError
	if errors.As(waitErr, &exit) {
		run.ReturnCode = exit.ExitCode()
	} else if waitErr != nil && !errors.Is(waitErr, exec.ErrWaitDelay) {
		return nil, fmt.Errorf("CLI '%s': %w", c.Name, waitErr)
	}
	return run, nil
}

// capped keeps the first maxStream bytes written to it.
type capped struct {
	bytes.Buffer
	dropped bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := maxStream - c.Len(); room < len(p) {
		c.dropped = true
		if room > 0 {
			c.Buffer.Write(p[:room])
		}
		return len(p), nil
	}
	return c.Buffer.Write(p)
}
