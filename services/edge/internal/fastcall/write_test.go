package fastcall

import (
	"context"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/edge/internal/mcpserver"
)

// TestAnAnswerWithoutProgressGoesOutWhole: an answer that follows no
// progress event is sent with its length, so the server writes its head
// and its one event in a single write when the call returns, rather than
// flushing the event and then a chunked stream's end.
func TestAnAnswerWithoutProgressGoesOutWhole(t *testing.T) {
	t.Parallel()
	sdk := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		t.Error("the SDK got the call")
		w.WriteHeader(http.StatusInternalServerError)
	})
	srv := httptest.NewServer(New(sdk, &tools{}))
	defer srv.Close()
	res := postCall(t, srv, headers("2025-11-25"), chatCall)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	const want = "event: message\ndata: " +
		`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"hi"}]}}` + "\n\n"
	if string(body) != want {
		t.Errorf("body %q, want %q", body, want)
	}
	if res.ContentLength != int64(len(want)) || len(res.TransferEncoding) > 0 {
		t.Errorf("sent with Content-Length %d and Transfer-Encoding %q; want length %d, not chunked",
			res.ContentLength, res.TransferEncoding, len(want))
	}
}

// TestWorkLeftAfterTheAnswerWaitsForIt: what a call leaves to be done once
// its answer is out (its log line) runs after the client has the whole
// answer, not before it: here that work waits for the client to have read
// it, which it could not if the answer went out only as the call returned.
// An error a 2026-07-28 client gets with a status of its own goes out
// whole, with its length, as every other answer.
func TestWorkLeftAfterTheAnswerWaitsForIt(t *testing.T) {
	t.Parallel()
	const modern = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/clientCapabilities":{},` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"chat","arguments":{"prompt":"hi"}}}`
	cases := []struct {
		name       string
		header     http.Header
		body       string
		result     *mcp.CallToolResult
		err        error
		wantStatus int
		wantBody   string
	}{
		{"an answer", headers("2025-11-25"), chatCall,
			&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil, http.StatusOK, `"text":"hi"`},
		{"an error with a status", headers("2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "chat"), modern,
			nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such prompt"}, http.StatusBadRequest,
			`"message":"no such prompt"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			read := make(chan struct{})
			ran := make(chan bool, 1)
			tool := func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				mcpserver.DoAfterAnswer(ctx, func() {
					select {
					case <-read:
						ran <- true
					case <-time.After(10 * time.Second):
						ran <- false
					}
				})
				return c.result, c.err
			}
			srv := httptest.NewServer(New(http.NotFoundHandler(), &tools{handler: tool}))
			defer srv.Close()
			res := postCall(t, srv, c.header, c.body)
			defer res.Body.Close()
			body, err := io.ReadAll(res.Body)
			if err != nil {
				t.Fatal(err)
			}
			close(read)
			if !ranWithin(t, ran) {
				t.Errorf("the work left after the answer ran before the client had it (%q)", body)
			}
			if res.StatusCode != c.wantStatus || !strings.Contains(string(body), c.wantBody) {
				t.Errorf("got %d %q, want %d and %s", res.StatusCode, body, c.wantStatus, c.wantBody)
			}
			if res.ContentLength != int64(len(body)) || len(res.TransferEncoding) > 0 {
				t.Errorf("sent with Content-Length %d and Transfer-Encoding %q; want length %d, not chunked",
					res.ContentLength, res.TransferEncoding, len(body))
			}
		})
	}
}

// TestAPanicLeavesNoAnswerButItsWork: a handler that panics has written no
// answer, and none is made up for it (no head of a stream that never
// comes: the client sees the connection end, as before there was work
// left for after the answer); what it left is still done.
func TestAPanicLeavesNoAnswerButItsWork(t *testing.T) {
	t.Parallel()
	ran := make(chan bool, 1)
	tool := func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mcpserver.DoAfterAnswer(ctx, func() { ran <- true })
		panic("the handler failed")
	}
	srv := httptest.NewUnstartedServer(New(http.NotFoundHandler(), &tools{handler: tool}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // net/http reports the panic
	srv.Start()
	defer srv.Close()
	if res, err := srv.Client().Do(callRequest(t, srv.URL, headers("2025-11-25"), chatCall)); err == nil {
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Errorf("a panicking call was answered %d %q; want the connection closed", res.StatusCode, body)
	}
	if !ranWithin(t, ran) {
		t.Error("the work the call left was not done")
	}
}

// chatCall is a 2025-era tools/call of chat.
const chatCall = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi"}}}`

// callRequest is a POST of body with header to url.
func callRequest(t *testing.T, url string, header http.Header, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header
	return req
}

// postCall sends body with header to srv.
func postCall(t *testing.T, srv *httptest.Server, header http.Header, body string) *http.Response {
	t.Helper()
	res, err := srv.Client().Do(callRequest(t, srv.URL, header, body))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// ranWithin is what the work left reported, or false if it reported
// nothing in good time.
func ranWithin(t *testing.T, ran <-chan bool) bool {
	t.Helper()
	select {
	case ok := <-ran:
		return ok
	case <-time.After(10 * time.Second):
		return false
	}
}

// TestASlowReaderHoldsTheWorkLeftOnlyAWhile: a client that does not read
// its answer cannot keep what the call left (its log line) from being
// done: the work waits for the answer to be out, but not for long.
func TestASlowReaderHoldsTheWorkLeftOnlyAWhile(t *testing.T) {
	t.Parallel()
	ran := make(chan bool, 1)
	big := strings.Repeat("x", 16<<20) // more than the sockets' buffers hold
	tool := func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		mcpserver.DoAfterAnswer(ctx, func() { ran <- true })
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: big}}}, nil
	}
	srv := httptest.NewServer(New(http.NotFoundHandler(), &tools{handler: tool}))
	defer srv.Close()
	// A client whose socket takes little before it reads.
	dialer := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		if cerr := c.Control(func(fd uintptr) {
			err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		}); cerr != nil {
			return cerr
		}
		return err
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: dialer.DialContext}}
	res, err := client.Do(callRequest(t, srv.URL, headers("2025-11-25"), chatCall))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if !ranWithin(t, ran) { // the body unread meanwhile
		t.Error("the work left waited for a client that does not read its answer")
	}
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil || n < int64(len(big)) {
		t.Errorf("read %d bytes of the answer (%v), want all of it", n, err)
	}
}
