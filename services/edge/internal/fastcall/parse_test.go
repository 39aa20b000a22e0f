package fastcall

import (
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// parseByMaps is parse as it was before it read the envelope and params
// from the scan that checks their shape: each decoded into a map by
// encoding/json. FuzzParseAsBefore holds parse to it. Both take the shape
// check's verdict, which TestPlainShape and the server's tests against
// the SDK hold to the SDK.
func parseByMaps(version string, header string, body []byte, server Server) (call, bool) {
	c := call{version: version}
	if _, plain := plainShape(body); !plain {
		return c, false
	}
	var msg map[string]json.RawMessage
	if json.Unmarshal(body, &msg) != nil || !onlyMapKeys(msg, "jsonrpc", "id", "method", "params") {
		return c, false
	}
	if !isString(msg["jsonrpc"], "2.0") || !isString(msg["method"], "tools/call") {
		return c, false
	}
	var ok bool
	if c.id, ok = parseID(msg["id"]); !ok {
		return c, false
	}
	var params map[string]json.RawMessage
	if json.Unmarshal(msg["params"], &params) != nil || params == nil ||
		!onlyMapKeys(params, "_meta", "name", "arguments") {
		return c, false
	}
	if json.Unmarshal(params["name"], &c.name) != nil || c.name == "" {
		return c, false
	}
	if c.handler, ok = server.PlainTool(c.name); !ok {
		return c, false
	}
	if args, given := params["arguments"]; given {
		if !isObject(args) {
			return c, false
		}
		c.arguments = args
	}
	if raw, given := params["_meta"]; given {
		if c.meta, ok = parseMeta(raw); !ok {
			return c, false
		}
	}
	if c.modern() {
		return c, modernMeta(c.meta, version) && header == c.name
	}
	_, named := c.meta[mcp.MetaKeyProtocolVersion]
	return c, !named
}

func onlyMapKeys(m map[string]json.RawMessage, keys ...string) bool {
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// knownTools knows chat and version, as plain tools.
type knownTools struct{}

func (knownTools) PlainTool(name string) (mcp.ToolHandler, bool) {
	return nil, name == "chat" || name == "version"
}
func (knownTools) Implementation() *mcp.Implementation { return &mcp.Implementation{Name: "zen"} }

// Whatever the body, parse answers as parseByMaps did: the same call, or
// the same refusal (the SDK's to answer).
func FuzzParseAsBefore(f *testing.F) {
	modernMeta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"c","version":"1"}}`
	for _, body := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":{"prompt":"hi"}}}`,
		` { "jsonrpc" : "2.0" , "id" : "a" , "method" : "tools/call" , "params" : { "name" : "chat" } } `,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{` + modernMeta +
			`,"name":"chat","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","arguments":[]}}`,
		`{"jsonrpc":"2.0","id":1.0,"method":"tools/call","params":{"name":"chat"}}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{"name":"chat"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat"},"extra":1}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","extra":1}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ch\u0061t"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat"}} x`,
		`{"jsonrpc":"2.0","id":1 ,"method":"tools/call","params":{"name":"chat","arguments":{"n":1} } }`,
		"{\"jsonrpc\":\"2.0\",\"id\":true\n,\"method\":\"tools/call\",\"params\":{\"name\":\"chat\"}}",
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat",}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"chat","_meta":{"progressToken":1}}}`,
		`null`, `[]`, `{}`, `{"params":{}}`, "{\"jsonrpc\xff\":\"2.0\"}",
	} {
		f.Add(body, "2025-11-25", "")
		f.Add(body, "2026-07-28", "chat")
	}
	f.Fuzz(func(t *testing.T, body, version, header string) {
		r := httptest.NewRequest("POST", "/mcp", nil)
		r.Header.Set(headerName, header)
		got, ok := parse(r, version, []byte(body), knownTools{})
		want, wantOK := parseByMaps(version, header, []byte(body), knownTools{})
		if ok != wantOK {
			t.Fatalf("parse of %q: %t, before %t", body, ok, wantOK)
		}
		if !ok {
			return
		}
		type parsed struct {
			ID        any
			Name      string
			Arguments string
			Meta      mcp.Meta
		}
		of := func(c call) parsed { return parsed{c.id.Raw(), c.name, string(c.arguments), c.meta} }
		if diff := cmp.Diff(of(want), of(got)); diff != "" {
			t.Errorf("parse of %q (-before +now):\n%s", body, diff)
		}
	})
}

// BenchmarkParse compares parse with parseByMaps on a 2026-07-28 call of
// an agent's size, its _meta included.
//
//	go test -run '^$' -bench Parse -count 4 ./services/edge/internal/fastcall
func BenchmarkParse(b *testing.B) {
	body := []byte(`{"jsonrpc":"2.0","id":17,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28",` +
		`"io.modelcontextprotocol/clientCapabilities":{"roots":{"listChanged":true},"sampling":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"bench","version":"v1"}},"name":"chat","arguments":{` +
		`"prompt":"Review the handler for races before we merge it.",` +
		`"continuation_id":"3f1c2b9e-4d5a-4c1b-9b2e-1a2b3c4d5e6f","model":"gpt-5"}}}`)
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set(headerName, "chat")
	b.Run("maps", func(b *testing.B) {
		for b.Loop() {
			if _, ok := parseByMaps(versionModern, "chat", body, knownTools{}); !ok {
				b.Fatal("not parsed")
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if _, ok := parse(r, versionModern, body, knownTools{}); !ok {
				b.Fatal("not parsed")
			}
		}
	})
}
