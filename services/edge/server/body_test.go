package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/serve"
	"github.com/zenmcp/zen/services/platform/slowbody"
)

// TestARefusedBodyIsNotWaitedFor: a request MCP's listener refuses (no
// token, a Host it does not answer to) is answered at once, and its
// connection let go while its body is still coming. The token and Host
// checks ran before the body's deadline, so net/http read what was left of
// a refused body for as long as its client took: 20,000 clients without a
// token, each sending a byte now and then, used every descriptor of
// `zen serve` and neither listener accepted another connection.
func TestARefusedBodyIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	s := edgeServer(t, &fakeRoles{}, func(c *Config) { c.Tokens = auth.Tokens{"secret-token": "alice"} })
	srv := httptest.NewServer(serve.BodyDeadline(serve.BodyTime, s.Handler())) // as serve.HTTP serves it
	t.Cleanup(srv.Close)
	for _, tc := range []struct {
		name, head string
		want       int
	}{
		{"no token", "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n",
			http.StatusUnauthorized},
		{"a Host not answered to", "POST /mcp HTTP/1.1\r\nHost: attacker.example\r\nContent-Type: application/json\r\n" +
			"Authorization: Bearer secret-token\r\n", http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			slowbody.Refused(t, srv.Listener.Addr().String(), tc.head, tc.want)
		})
	}
}

// TestAnsweredCallsKeepTheirConnection: a call whose body was read keeps
// its connection for the next, on fastcall's path and the SDK's: a body
// read to its declared length without io.EOF counts as read, or every
// call would pay for a new connection.
func TestAnsweredCallsKeepTheirConnection(t *testing.T) {
	t.Parallel()
	answer := &reply.Reply{Status: reply.StatusSuccess, Content: "hi", Metadata: reply.Metadata{ToolName: "chat"}}
	s := edgeServer(t, &fakeRoles{result: &executorv1.ToolResult{Reply: answer.Encode()}})
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	for name, body := range map[string]string{
		"a tool call": `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat",` +
			`"arguments":{"prompt":"hi","model":"llama3.2"}}}`,
		"tools/list": `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			res := request(t.Context(), t, srv.URL, rawRequest{body: body, version: "2025-11-25"})
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.Close || res.StatusCode != http.StatusOK {
				t.Errorf("%d, closing the connection %v; want 200 on a connection kept", res.StatusCode, res.Close)
			}
		})
	}
}
