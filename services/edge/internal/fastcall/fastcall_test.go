package fastcall

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// tools is one tool, chat, whose handler records what it was called with
// (or is handler, when set).
type tools struct {
	got     []*mcp.CallToolRequest
	handler mcp.ToolHandler // chat's, when set
}

func (ts *tools) Implementation() *mcp.Implementation {
	return &mcp.Implementation{Name: "zen", Version: "test"}
}

func (ts *tools) PlainTool(name string) (mcp.ToolHandler, bool) {
	if name != "chat" {
		return nil, false
	}
	if ts.handler != nil {
		return ts.handler, true
	}
	return func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ts.got = append(ts.got, req)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi"}}}, nil
	}, true
}

// serve sends body with header to a fastcall handler and reports whether
// the SDK's handler got the request, and with which body.
func serve(t *testing.T, header http.Header, body string) (ts *tools, sdkBody string, sdkCalled bool) {
	t.Helper()
	ts = &tools{}
	sdk := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("the SDK could not read the body: %v", err)
		}
		sdkBody, sdkCalled = string(b), true
	})
	// As the edge serves it: behind the bearer token check, which tells
	// who calls.
	verify := func(_ context.Context, token string, _ *http.Request) (*mcpauth.TokenInfo, error) {
		return &mcpauth.TokenInfo{UserID: "client-of-" + token, Expiration: time.Now().Add(time.Hour)}, nil
	}
	h := mcpauth.RequireBearerToken(verify, nil)(New(sdk, ts))
	r := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
	r.Header = header.Clone()
	r.Header.Set("Authorization", "Bearer alice")
	h.ServeHTTP(httptest.NewRecorder(), r)
	return ts, sdkBody, sdkCalled
}

func headers(version string, extra ...string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", version)
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

// TestCommonCallsRunHere: the calls MCP clients send on each version run
// the tool's handler here, with what the SDK would give it.
func TestCommonCallsRunHere(t *testing.T) {
	t.Parallel()
	const modern = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"chat","arguments":{"prompt":"hi"}}}`
	const legacy = `{"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi"},` +
		`"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},` +
		`"jsonrpc":"2.0","id":"7"}`
	cases := []struct {
		name   string
		header http.Header
		body   string
		meta   mcp.Meta
	}{
		{"go-sdk, 2026-07-28", headers("2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "chat"), modern,
			mcp.Meta{"io.modelcontextprotocol/clientCapabilities": map[string]any{"roots": map[string]any{
				"listChanged": true}}, "io.modelcontextprotocol/clientInfo": map[string]any{"name": "bench",
				"version": "1"}, "io.modelcontextprotocol/protocolVersion": "2026-07-28"}},
		{"TypeScript SDK, 2025-11-25", headers("2025-11-25"), legacy,
			mcp.Meta{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
		{"2025-06-18", headers("2025-06-18"), legacy,
			mcp.Meta{"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
		{"a progress token", headers("2025-11-25"), strings.Replace(legacy, `"_meta":{`, `"_meta":{"progressToken":1,`,
			1), mcp.Meta{"progressToken": 1.0, "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts, _, sdkCalled := serve(t, c.header, c.body)
			if sdkCalled || len(ts.got) != 1 {
				t.Fatalf("the call went to the SDK (%v) and ran here %d times", sdkCalled, len(ts.got))
			}
			p := ts.got[0].Params
			if diff := cmp.Diff(c.meta, p.Meta); diff != "" {
				t.Errorf("_meta (-want +got):\n%s", diff)
			}
			if p.Name != "chat" || string(p.Arguments) != `{"prompt":"hi"}` {
				t.Errorf("params: name %q, arguments %s", p.Name, p.Arguments)
			}
			extra := ts.got[0].Extra
			if extra == nil || extra.Header.Get("Mcp-Protocol-Version") == "" {
				t.Fatalf("the handler did not get the request's headers")
			}
			if extra.TokenInfo == nil || extra.TokenInfo.UserID != "client-of-alice" {
				t.Errorf("the handler acts for %+v, want the token's client", extra.TokenInfo)
			}
		})
	}
}

// TestOtherRequestsGoToTheSDK: what this package does not answer reaches
// the SDK with its body whole, having run nothing.
func TestOtherRequestsGoToTheSDK(t *testing.T) {
	t.Parallel()
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{}}}`
	cases := []struct {
		name   string
		header http.Header
		body   string
	}{
		{"initialize", headers("2025-11-25"), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`},
		{"tools/list", headers("2025-11-25"), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`},
		{"unknown tool", headers("2025-11-25"), strings.Replace(call, `"chat"`, `"nope"`, 1)},
		{"notification", headers("2025-11-25"), `{"jsonrpc":"2.0","method":"notifications/cancelled"}`},
		{"batch", headers("2025-03-26"), "[" + call + "]"},
		{"no version", headers(""), call},
		{"an unknown version", headers("2099-01-01"), call},
		{"2026 without its headers", headers("2026-07-28"), call},
		{"2026 without _meta", headers("2026-07-28", "Mcp-Method", "tools/call", "Mcp-Name", "chat"), call},
		{"a fractional id", headers("2025-11-25"), strings.Replace(call, `"id":1`, `"id":1.0`, 1)},
		{"garbage", headers("2025-11-25"), `{"jsonrpc":`},
		{"a big body for an unknown tool", headers("2025-11-25"), strings.NewReplacer(`{}`, `{"prompt":"`+
			strings.Repeat("x", 1<<16)+`"}`, `"chat"`, `"nope"`).Replace(call) + " "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ts, body, sdkCalled := serve(t, c.header, c.body)
			if !sdkCalled || len(ts.got) != 0 {
				t.Fatalf("the SDK got the request: %v; it ran here %d times", sdkCalled, len(ts.got))
			}
			if body != c.body {
				t.Errorf("the SDK read %d bytes of a %d-byte body", len(body), len(c.body))
			}
		})
	}
}

// TestResultTypeComesLast pins what encodeResult relies on: the SDK's
// encoder writes a result's fields in this order, so resultType, which
// only the SDK can set, goes last.
func TestResultTypeComesLast(t *testing.T) {
	t.Parallel()
	h := New(nil, &tools{})
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "<x>"}},
		StructuredContent: json.RawMessage(`{"a":"<x>"}`), IsError: true}
	got, err := h.encodeResult(true, res)
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"zen","version":"test"}},` +
		`"content":[{"type":"text","text":"\u003cx\u003e"}],"structuredContent":{"a":"\u003cx\u003e"},` +
		`"isError":true,"resultType":"complete"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if res.Meta != nil {
		t.Errorf("encoding changed the handler's result: %v", res.Meta)
	}
}

// TestSDKVersion: fastcall answers as go-sdk v1.8.0 does; another version
// may answer otherwise. Compare them (TestFastCallsAnswerAsTheSDK, and
// the SDK's streamable.go and server.go) before changing this.
func TestSDKVersion(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Version}}", "github.com/modelcontextprotocol/go-sdk").
		Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	if v := strings.TrimSpace(string(out)); v != "v1.8.0" {
		t.Errorf("go-sdk is %s; fastcall was checked against v1.8.0", v)
	}
}

// readAhead is a body a handler in front read whole (streamhttp.Peeked).
type readAhead struct {
	io.Reader
	whole []byte
}

func (b *readAhead) Whole() []byte { return b.whole }
func (*readAhead) Close() error    { return nil }

// TestABodyReadAheadIsNotReadAgain: a call whose body the handler in front
// read whole runs from those bytes, without reading the body (which here
// fails); a request left to the SDK finds its body unread.
func TestABodyReadAheadIsNotReadAgain(t *testing.T) {
	t.Parallel()
	const call = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi"}}}`
	const list = `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`
	for _, tc := range []struct {
		name, whole string
		body        io.Reader
		wantSDK     string // the body the SDK reads, or "" when the call runs here
	}{
		{"a call", call, iotest.ErrReader(errors.New("read again")), ""},
		{"a listing", list, strings.NewReader(list), list},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ts := &tools{}
			var sdkBody string
			sdk := http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				sdkBody = string(b)
			})
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r.Header = headers("2025-11-25")
			r.Body = &readAhead{tc.body, []byte(tc.whole)}
			New(sdk, ts).ServeHTTP(httptest.NewRecorder(), r)
			if sdkBody != tc.wantSDK || (tc.wantSDK == "") != (len(ts.got) == 1) {
				t.Errorf("the SDK read %q (want %q); the call ran here %d times", sdkBody, tc.wantSDK, len(ts.got))
			}
		})
	}
}
