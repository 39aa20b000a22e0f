package fastcall

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

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
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = headers("2025-11-25")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
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
func TestWorkLeftAfterTheAnswerWaitsForIt(t *testing.T) {
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
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	}
	srv := httptest.NewServer(New(http.NotFoundHandler(), &tools{handler: tool}))
	defer srv.Close()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = headers("2025-11-25")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	close(read)
	if !<-ran {
		t.Errorf("the work left after the answer ran before the client had it (%q)", body)
	}
	if !strings.Contains(string(body), `"text":"hi"`) {
		t.Errorf("body %q, want the tool's answer", body)
	}
}
