package stdio

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// wireError is the part of a JSON-RPC reply the test looks at.
type wireError struct {
	ID    json.RawMessage
	Code  int64
	Start string // the message's first words
}

// TestBadLinesAreAnsweredAndTheSessionGoesOn: each line that is not one
// JSON-RPC message gets a JSON-RPC error, and the server then answers the
// next good request as if nothing had happened.
func TestBadLinesAreAnsweredAndTheSessionGoesOn(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, line string
		want       wireError
	}{
		{"not JSON", `{"jsonrpc":"2.0","id":7,"method":`,
			wireError{ID: json.RawMessage("null"), Code: -32700, Start: "zen could not parse this message as JSON"}},
		{"garbage", `hello`,
			wireError{ID: json.RawMessage("null"), Code: -32700, Start: "zen could not parse this message as JSON"}},
		{"JSON but not JSON-RPC", `{"id":3,"hello":"world"}`,
			wireError{ID: json.RawMessage("3"), Code: -32600, Start: "zen could not read this message as JSON-RPC"}},
		{"a batch", `[{"jsonrpc":"2.0","id":4,"method":"ping"}]`,
			wireError{ID: json.RawMessage("null"), Code: -32600, Start: "zen takes one JSON-RPC message at a time"}},
		{"too long", `{"jsonrpc":"2.0","id":"big","method":"tools/call","params":{"x":"` +
			strings.Repeat("x", MaxLine) + `"}}`,
			wireError{ID: json.RawMessage(`"big"`), Code: -32600, Start: "zen refused this message: it is 4.0 MiB"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := startServer(t)
			c.send(tt.line)
			var got struct {
				ID    json.RawMessage
				Error struct {
					Code    int64
					Message string
				}
			}
			c.receive(&got)
			start := got.Error.Message[:min(len(tt.want.Start), len(got.Error.Message))]
			if diff := cmp.Diff(tt.want, wireError{ID: got.ID, Code: got.Error.Code, Start: start}); diff != "" {
				t.Errorf("reply to the bad line (-want +got):\n%s\nmessage: %s", diff, got.Error.Message)
			}
			c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",` +
				`"capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
			var init struct {
				ID     int
				Result struct{ ServerInfo struct{ Name string } }
			}
			c.receive(&init)
			if init.ID != 1 || init.Result.ServerInfo.Name != "test-server" {
				t.Errorf("initialize after the bad line: %+v", init)
			}
		})
	}
}

// client speaks to a server over the transport, line by line.
type client struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

func startServer(t *testing.T) *client {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	server := mcp.NewServer(&mcp.Implementation{Name: "test-server", Version: "1"}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	ss, err := server.Connect(ctx, &Transport{In: inR, Out: outW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		_ = ss.Close()
		_ = outR.Close()
	})
	c := &client{t: t, in: inW, lines: make(chan string, 4)}
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
		close(c.lines)
	}()
	return c
}

func (c *client) send(line string) {
	c.t.Helper()
	go func() { _, _ = io.WriteString(c.in, line+"\n") }() // the pipe blocks until the server reads
}

func (c *client) receive(v any) {
	c.t.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the server closed its output: the session ended")
		}
		if err := json.Unmarshal([]byte(line), v); err != nil {
			c.t.Fatalf("reply %q: %v", line, err)
		}
	case <-time.After(10 * time.Second):
		c.t.Fatal("no reply within 10s")
	}
}
