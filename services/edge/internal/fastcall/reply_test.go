package fastcall

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// FuzzPlainAnswer: the answer plainAnswer writes in one pass is the one
// encodeResult and the SDK's message encoder write, byte for byte, for any
// text, structured content, id, protocol version and server name (that
// pair's own fidelity to the SDK is TestFastCallsAnswerAsTheSDK's).
func FuzzPlainAnswer(f *testing.F) {
	f.Add(`{"status":"success","content":"<b>a & b</b>\u2028 \"q\"\n"}`, []byte(`{"status":"success"}`), false,
		true, "7", int64(7), "zen", "1.0")
	f.Add("plain \x00 text \xff", []byte(` { "a" : [ 1 , "<x>" ] } `), true, false, "", int64(-1), "z<e>n&", "\xff")
	f.Add("", []byte{}, false, false, "<id>&", int64(0), "", "")
	f.Add("x", []byte(`not json`), false, true, "", int64(1<<53), "zen", "dev")
	f.Fuzz(func(t *testing.T, text string, structured []byte, isError, modern bool, sid string, nid int64,
		name, version string) {
		h := New(nil, &server{impl: &mcp.Implementation{Name: name, Title: name + "!", Version: version}})
		c := call{version: "2025-11-25"}
		if modern {
			c.version = versionModern
		}
		var err error
		if c.id, err = jsonrpc.MakeID(float64(nid)); sid != "" {
			c.id, err = jsonrpc.MakeID(sid)
		}
		if err != nil {
			t.Fatal(err)
		}
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isError}
		if len(structured) > 0 {
			res.StructuredContent = json.RawMessage(structured)
		}
		got, ok := h.plainAnswer(c, res)
		if !ok {
			if json.Valid(structured) || len(structured) == 0 {
				t.Fatalf("plainAnswer left a plain result to the SDK's encoders: %q, %q", text, structured)
			}
			return
		}
		result, err := h.encodeResult(c.modern(), res)
		if err != nil {
			t.Fatalf("plainAnswer wrote an answer the SDK's encoders cannot: %v", err)
		}
		want, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: c.id, Result: result})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(string(want), string(got)); diff != "" {
			t.Fatalf("(-SDK's encoders +plainAnswer):\n%s", diff)
		}
	})
}

// server names itself as told and has no tools.
type server struct{ impl *mcp.Implementation }

func (s *server) Implementation() *mcp.Implementation    { return s.impl }
func (*server) PlainTool(string) (mcp.ToolHandler, bool) { return nil, false }
