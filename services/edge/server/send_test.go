package server

import (
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/slowbody"
)

// TestAnAnswerNobodyReadsEnds: an MCP answer whose client stops reading
// ends once a piece of it has waited sendTime to go out, and what it held
// with it. Answers are not all small: a thread resource of a 36 MB thread
// went out as 216 MB, and four clients that read none of theirs held
// 6 GB of zen serve for as long as their connections lived.
func TestAnAnswerNobodyReadsEnds(t *testing.T) {
	t.Parallel()
	answer := &reply.Reply{Status: reply.StatusSuccess, Content: strings.Repeat("a", 4<<20),
		Metadata: reply.Metadata{ToolName: "chat"}}
	s := edgeServer(t, &fakeRoles{result: &executorv1.ToolResult{Reply: answer.Encode()}},
		func(c *Config) { c.MaxOutputTokens = 10_000_000 })
	s.sendTime = 300 * time.Millisecond
	srv, closed := slowbody.NarrowServer(t, s.Handler())
	conn, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	_ = conn.(*net.TCPConn).SetReadBuffer(4 << 10)
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat",` +
		`"arguments":{"prompt":"hi","model":"llama3.2"}}}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nMcp-Protocol-Version: 2025-11-25\r\n"+
		"Content-Length: %d\r\n\r\n%s", len(body), body)
	_, _ = conn.Read(make([]byte, 1)) // the answer has begun; no more is read
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("an answer nobody reads was still held after 20 s")
	}
}
