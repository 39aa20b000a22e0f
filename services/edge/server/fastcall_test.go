package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"github.com/zenmcp/zen/services/platform/reply"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// rawRequest is one HTTP request to the MCP endpoint, as a client might
// send it, well formed or not.
type rawRequest struct {
	name    string
	header  map[string]string // set; an empty value deletes the header
	body    string
	version string // Mcp-Protocol-Version, "" for none
}

// rawAnswer is what a client reads: the status, the headers the SDK sets
// and the body, trace ids (which differ per call) masked.
type rawAnswer struct {
	Status                            int
	ContentType, CacheControl, Access string
	Body                              string
}

var traceIDs = regexp.MustCompile(`[0-9a-f]{32}`)

func send(t *testing.T, url string, r rawRequest) rawAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if r.version != "" {
		req.Header.Set("Mcp-Protocol-Version", r.version)
	}
	for k, v := range r.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return rawAnswer{Status: res.StatusCode, ContentType: res.Header.Get("Content-Type"),
		CacheControl: res.Header.Get("Cache-Control"), Access: res.Header.Get("Mcp-Session-Id"),
		Body: traceIDs.ReplaceAllString(string(body), "<trace>")}
}

// modernMeta is the _meta a 2026-07-28 client sends with every call.
const modernMeta = `"_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},` +
	`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"1"},` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28"}`

// callRequests are tools/call requests of every shape: those fastcall
// answers, and those it must leave to the SDK, in each protocol version.
func callRequests() []rawRequest {
	const args = `"arguments":{"prompt":"hello","model":"llama3.2"}`
	call := func(id, params string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{` + params + `}}`
	}
	modern := map[string]string{"Mcp-Method": "tools/call", "Mcp-Name": "chat"}
	with := func(h map[string]string, k, v string) map[string]string {
		out := map[string]string{k: v}
		for key, val := range h {
			if key != k {
				out[key] = val
			}
		}
		return out
	}
	var reqs []rawRequest
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "", "2099-01-01"} {
		add := func(name string, header map[string]string, body string) {
			reqs = append(reqs, rawRequest{name: v + "/" + name, version: v, header: header, body: body})
		}
		add("plain", nil, call("1", `"name":"chat",`+args))
		add("string id", nil, call(`"abc"`, `"name":"chat",`+args))
		add("empty string id", nil, call(`""`, `"name":"chat",`+args))
		add("negative id", nil, call("-7", `"name":"chat",`+args))
		add("fractional id", nil, call("1.5", `"name":"chat",`+args))
		add("exponent id", nil, call("1e2", `"name":"chat",`+args))
		add("huge id", nil, call("9007199254740993", `"name":"chat",`+args))
		add("null id", nil, call("null", `"name":"chat",`+args))
		add("no id", nil, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"chat",`+args+`}}`)
		add("unknown tool", nil, call("2", `"name":"nope",`+args))
		add("no name", nil, call("2", args))
		add("name not a string", nil, call("2", `"name":5,`+args))
		add("no arguments", nil, call("3", `"name":"chat"`))
		add("empty arguments", nil, call("3", `"name":"chat","arguments":{}`))
		add("arguments an array", nil, call("3", `"name":"chat","arguments":[1]`))
		add("arguments null", nil, call("3", `"name":"chat","arguments":null`))
		add("bad arguments", nil, call("3", `"name":"chat","arguments":{"prompt":7}`))
		add("extra member", nil, `{"jsonrpc":"2.0","id":4,"method":"tools/call","extra":1,"params":{"name":"chat",`+
			args+`}}`)
		add("extra param", nil, call("4", `"name":"chat","extra":1,`+args))
		add("upper-case member", nil, `{"jsonrpc":"2.0","id":4,"Method":"tools/call","params":{"name":"chat",`+
			args+`}}`)
		add("json-rpc 1.0", nil, `{"jsonrpc":"1.0","id":4,"method":"tools/call","params":{"name":"chat",`+args+`}}`)
		add("batch", nil, `[`+call("5", `"name":"chat",`+args)+`]`)
		add("not json", nil, `{"jsonrpc":"2.0","id":5,`)
		add("meta", nil, call("6", `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},`+
			`"name":"chat",`+args))
		add("progress token", nil, call("6", `"_meta":{"progressToken":"p1"},"name":"chat",`+args))
		add("meta an array", nil, call("6", `"_meta":[],"name":"chat",`+args))
		add("meta names a version", nil, call("6", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},`+
			`"name":"chat",`+args))
		add("modern meta", nil, call("6", modernMeta+`,"name":"chat",`+args))
		add("accepts json only", map[string]string{"Accept": "application/json"}, call("7", `"name":"chat",`+args))
		add("accepts anything", map[string]string{"Accept": "*/*"}, call("7", `"name":"chat",`+args))
		add("text body", map[string]string{"Content-Type": "text/plain"}, call("7", `"name":"chat",`+args))
		add("json with charset", map[string]string{"Content-Type": "application/json; charset=utf-8"},
			call("7", `"name":"chat",`+args))
		add("last event id", map[string]string{"Last-Event-ID": "x"}, call("7", `"name":"chat",`+args))
	}
	const v = "2026-07-28"
	add := func(name string, header map[string]string, body string) {
		reqs = append(reqs, rawRequest{name: v + "/" + name, version: v, header: header, body: body})
	}
	add("plain", modern, call("1", modernMeta+`,"name":"chat",`+args))
	add("string id", modern, call(`"abc"`, modernMeta+`,"name":"chat",`+args))
	add("no arguments", modern, call("1", modernMeta+`,"name":"chat"`))
	add("bad arguments", modern, call("1", modernMeta+`,"name":"chat","arguments":{"prompt":7}`))
	add("unknown tool", with(modern, "Mcp-Name", "nope"), call("2", modernMeta+`,"name":"nope",`+args))
	add("no method header", with(modern, "Mcp-Method", ""), call("2", modernMeta+`,"name":"chat",`+args))
	add("wrong method header", with(modern, "Mcp-Method", "tools/list"), call("2", modernMeta+`,"name":"chat",`+args))
	add("no name header", with(modern, "Mcp-Name", ""), call("2", modernMeta+`,"name":"chat",`+args))
	add("wrong name header", with(modern, "Mcp-Name", "version"), call("2", modernMeta+`,"name":"chat",`+args))
	add("no meta", modern, call("3", `"name":"chat",`+args))
	add("meta without version", modern, call("3", `"_meta":{"io.modelcontextprotocol/clientCapabilities":{}},`+
		`"name":"chat",`+args))
	add("meta with another version", modern, call("3", swapped(modernMeta, `protocolVersion":"2026-07-28"`,
		`protocolVersion":"2025-11-25"`)+`,"name":"chat",`+args))
	add("meta without capabilities", modern, call("3", `"_meta":{"io.modelcontextprotocol/protocolVersion":`+
		`"2026-07-28"},"name":"chat",`+args))
	add("capabilities null", modern, call("3", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":null},"name":"chat",`+args))
	add("capabilities a string", modern, call("3", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":"x"},"name":"chat",`+args))
	add("client info a string", modern, call("3", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":"x"},"name":"chat",`+args))
	add("no client info", modern, call("3", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{}},"name":"chat",`+args))
	add("progress token", modern, call("3", swapped(modernMeta, `"_meta":{`, `"_meta":{"progressToken":7,`)+
		`,"name":"chat",`+args))
	add("input responses", modern, call("3", modernMeta+`,"name":"chat","inputResponses":{},`+args))
	add("batch", modern, `[`+call("5", modernMeta+`,"name":"chat",`+args)+`]`)
	return reqs
}

// swapped is s with old replaced by new; old must be in s, or the case
// would not be the one its name says.
func swapped(s, old, new string) string {
	if !strings.Contains(s, old) {
		panic(fmt.Sprintf("%q is not in %q", old, s))
	}
	return strings.Replace(s, old, new, 1)
}

// TestFastCallsAnswerAsTheSDK holds fastcall to the SDK's answers, byte
// for byte: every request goes to an edge with fastcall and to the same
// edge without it, for each way a call can end.
func TestFastCallsAnswerAsTheSDK(t *testing.T) {
	t.Parallel()
	answer := &reply.Reply{Status: reply.StatusSuccess, Content: "<b>a & b</b>\u2028é \"q\"\n",
		ContentType: reply.Text, Metadata: reply.Metadata{ToolName: "chat", ModelUsed: "llama3.2"}}
	failed := &reply.Reply{Status: reply.StatusError, Content: "the tool failed",
		Metadata: reply.Metadata{ToolName: "chat"}}
	outcomes := map[string]*fakeRoles{
		"answer":         {result: &executorv1.ToolResult{Reply: answer.Encode()}},
		"tool error":     {result: &executorv1.ToolResult{Reply: failed.Encode(), IsError: true}},
		"executor fails": {execute: status.Error(codes.Internal, "boom")},
		"memory down":    {memoryDown: true, result: &executorv1.ToolResult{Reply: answer.Encode()}},
	}
	for outcome, roles := range outcomes {
		t.Run(outcome, func(t *testing.T) {
			t.Parallel()
			s := edgeServer(t, roles)
			fast := httptest.NewServer(s.Handler())
			t.Cleanup(fast.Close)
			s.sdkOnly = true
			sdk := httptest.NewServer(s.Handler())
			t.Cleanup(sdk.Close)
			for _, r := range callRequests() {
				want, got := send(t, sdk.URL, r), send(t, fast.URL, r)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("%s: fastcall's answer differs from the SDK's (-sdk +fastcall):\n%s", r.name, diff)
				}
			}
		})
	}
}

// TestFastCallsAnswerWhatTheyShould: the common calls of each protocol
// version are answered, not refused, so the comparison above compares
// answers (a broken fake would make both paths fail alike).
func TestFastCallsAnswerWhatTheyShould(t *testing.T) {
	t.Parallel()
	answer := &reply.Reply{Status: reply.StatusSuccess, Content: "fine", Metadata: reply.Metadata{ToolName: "chat"}}
	url := edgeOver(t, &fakeRoles{result: &executorv1.ToolResult{Reply: answer.Encode()}})
	for _, r := range callRequests() {
		if !strings.HasSuffix(r.name, "/plain") || r.version == "2024-11-05" || r.version == "2099-01-01" {
			continue
		}
		got := send(t, url, r)
		if got.Status != http.StatusOK || !strings.Contains(got.Body, `\"content\":\"fine\"`) {
			t.Errorf("%s: %d %s", r.name, got.Status, got.Body)
		}
	}
}
