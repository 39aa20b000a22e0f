package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
	"golang.org/x/sys/unix"
)

// TestStdioReadsOnPastAMalformedLine: a line that is not JSON gets a
// JSON-RPC parse error (-32700, id null) and `zen stdio` keeps reading, as
// JSON-RPC asks; it used to end the session without a word.
func TestStdioReadsOnPastAMalformedLine(t *testing.T) {
	t.Parallel()
	cmd := exec.Command(zenBin, "stdio")
	cmd.Env = baseEnv(t, fakeEnv(fakemodel.New(t)))
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = stdin.Close() // the client leaving ends zen stdio
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("zen stdio did not exit within 30s of stdin closing")
		}
	})
	lines := make(chan string, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	receive := func(v any) {
		t.Helper()
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatal("zen stdio closed stdout: the session ended")
			}
			if err := json.Unmarshal([]byte(line), v); err != nil {
				t.Fatalf("reply %q: %v", line, err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no reply within 30s")
		}
	}

	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":1,"method":`+"\n")
	var refusal struct {
		JSONRPC string
		ID      json.RawMessage
		Error   struct{ Code int64 }
	}
	receive(&refusal)
	want := struct {
		JSONRPC string
		ID      json.RawMessage
		Error   struct{ Code int64 }
	}{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: struct{ Code int64 }{-32700}}
	if diff := cmp.Diff(want, refusal); diff != "" {
		t.Errorf("reply to a malformed line (-want +got):\n%s", diff)
	}

	_, _ = io.WriteString(stdin, `{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":`+
		`"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	var init struct {
		ID     int
		Result struct{ ServerInfo struct{ Name string } }
	}
	receive(&init)
	if init.ID != 2 || init.Result.ServerInfo.Name != "zen" {
		t.Errorf("initialize after the malformed line: %+v", init)
	}
}

// TestStdioAnswersWhatItTookBeforeItsInputEnded: a script that writes its
// requests and closes stdin (printf ... | zen stdio) got no answer to a
// call still running when the input ended: the session ended with the
// input, and the call with it. The calls taken are answered first now.
func TestStdioAnswersWhatItTookBeforeItsInputEnded(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "a considered answer", Delay: 500 * time.Millisecond}
	})
	cmd := exec.Command(zenBin, "stdio")
	cmd.Env = baseEnv(t, fakeEnv(fake))
	cmd.Dir = t.TempDir()
	cmd.Stdin = strings.NewReader(chatScript("think", cmd.Dir))
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.Output(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("zen stdio did not exit within 60s of its input ending")
	}
	if err != nil {
		t.Fatalf("zen stdio: %v", err)
	}
	if !strings.Contains(string(out), `"id":2`) || !strings.Contains(string(out), "a considered answer") {
		t.Errorf("stdout has no answer to the call taken before the input ended:\n%s", out)
	}
}

// TestStdioEndsWhenItsReaderStopsReading: an answer too large for a pipe
// whose reader had stopped reading held zen stdio past SIGTERM for good:
// closing the session waited on the stuck write. It exits within the drain
// timeout and a grace now.
func TestStdioEndsWhenItsReaderStopsReading(t *testing.T) {
	t.Parallel()
	fake := fakemodel.New(t)
	asked := make(chan struct{}, 1)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		asked <- struct{}{}
		return fakemodel.Reply{Content: strings.Repeat("a long answer. ", 40_000)} // 600 KB, past a pipe's buffer
	})
	cmd := exec.Command(zenBin, "stdio")
	cmd.Env = baseEnv(t, mergeEnv(fakeEnv(fake), map[string]string{"ZEN_DRAIN_TIMEOUT": "1s"}))
	cmd.Dir = t.TempDir()
	stdin, err := cmd.StdinPipe() // left open: the client is still there, but reads nothing
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe() // never read
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	if _, err := io.WriteString(stdin, chatScript("say a lot", cmd.Dir)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	case <-time.After(30 * time.Second):
		t.Fatal("the call never reached the model")
	}
	// The answer's write blocks once the pipe holds all it can.
	waitFor(t, 30*time.Second, "stdout's pipe to fill", func() bool {
		n, err := unix.IoctlGetInt(int(stdout.(*os.File).Fd()), unix.TIOCINQ) // FIONREAD: the bytes waiting
		return err == nil && n >= 48<<10                                      // a page or so short of 64 KiB when full
	})
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-exited:
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("zen stdio still ran 30s after SIGTERM, an answer stuck on its stdout; its drain lasts 1s")
	}
}

// chatScript is what a script sends zen stdio for one chat call, id 2,
// before it closes stdin: the handshake, and the call.
func chatScript(prompt, dir string) string {
	args, _ := json.Marshal(map[string]any{"prompt": prompt, "model": "llama3.2",
		"working_directory_absolute_path": dir})
	return `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",` +
		`"capabilities":{},"clientInfo":{"name":"script","version":"1"}}}` + "\n" +
		`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"chat","arguments":` + string(args) + `}}` + "\n"
}
