package fastcall

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// plainAnswer writes the answer to a call whose result is what zen's tools
// return, one text and the same JSON as structured content, in one pass:
// the bytes the SDK's encoders make of it (encodeResult, then the JSON-RPC
// response), which nest three encoders that each check and copy what the
// one inside wrote. FuzzPlainAnswer holds the two to the same bytes. It
// reports false for any other result.
func (h *Handler) plainAnswer(c call, res *mcp.CallToolResult) ([]byte, bool) {
	if len(res.Content) != 1 || res.Meta != nil {
		return nil, false
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok || text.Meta != nil || text.Annotations != nil {
		return nil, false
	}
	var structured json.RawMessage
	switch v := res.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if structured = compactHTML(v); structured == nil {
			return nil, false
		}
	default:
		return nil, false
	}
	// The envelope is the SDK's, around a placeholder result: its id is
	// encoded as the SDK encodes ids.
	head, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: c.id, Result: json.RawMessage("0")})
	if err != nil || !bytes.HasSuffix(head, []byte("0}")) {
		return nil, false
	}
	quoted, err := json.Marshal(text.Text) // escapes HTML, as TextContent's encoder does
	if err != nil {
		return nil, false
	}
	b := make([]byte, 0, len(head)+len(h.serverInfo)+len(quoted)+len(structured)+128)
	b = append(b, head[:len(head)-2]...)
	b = append(b, '{')
	if c.modern() {
		b = append(b, `"_meta":{"`+mcp.MetaKeyServerInfo+`":`...)
		b = append(b, h.serverInfo...)
		b = append(b, "},"...)
	}
	b = append(b, `"content":[{"type":"text","text":`...)
	b = append(b, quoted...)
	b = append(b, "}]"...)
	if structured != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, structured...)
	}
	if res.IsError {
		b = append(b, `,"isError":true`...)
	}
	if c.modern() {
		b = append(b, `,"resultType":"complete"`...)
	}
	return append(b, "}}"...), true
}

// compactHTML is raw as encoding/json writes a RawMessage with HTML
// escaping on (compacted, <, >, & and U+2028/9 escaped), or nil if raw is
// not JSON.
func compactHTML(raw json.RawMessage) json.RawMessage {
	var compact bytes.Buffer
	if json.Compact(&compact, raw) != nil {
		return nil
	}
	var out bytes.Buffer
	out.Grow(compact.Len())
	json.HTMLEscape(&out, compact.Bytes())
	return out.Bytes()
}

// encodeResult encodes res as the SDK's server does (callTool, then
// ServerSession.handle): an empty content list rather than none, and on
// the 2026-07-28 protocol the server's name in _meta (annotateServerInfo)
// and resultType "complete", which CallToolResult's encoder writes last.
func (h *Handler) encodeResult(modern bool, res *mcp.CallToolResult) (json.RawMessage, error) {
	out := *res
	if out.Content == nil {
		out.Content = []mcp.Content{}
	}
	if modern {
		meta := mcp.Meta{}
		for k, v := range out.Meta {
			meta[k] = v
		}
		if _, ok := meta[mcp.MetaKeyServerInfo]; !ok {
			meta[mcp.MetaKeyServerInfo] = h.server.Implementation()
		}
		out.Meta = meta
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(&out); err != nil {
		return nil, err
	}
	data := bytes.TrimRight(buf.Bytes(), "\n")
	if modern {
		if len(data) < 2 || data[len(data)-1] != '}' {
			return nil, errors.New("a tool result did not encode as an object")
		}
		data = append(data[:len(data)-1:len(data)-1], `,"resultType":"complete"}`...)
	}
	return data, nil
}

// errorStatus is the status the SDK sends an error response with instead
// of an SSE event, or 0 (extractErrorStatus): on the 2026-07-28 protocol,
// method not found is a 404 and invalid parameters, an unsupported
// version or missing client capabilities a 400.
func errorStatus(modern bool, err error) int {
	var jerr *jsonrpc.Error
	if !modern || !errors.As(err, &jerr) {
		return 0
	}
	switch jerr.Code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeUnsupportedProtocolVersion, mcp.CodeMissingRequiredClientCapabilities:
		return http.StatusBadRequest
	}
	return 0
}

// internalError answers a call whose answer could not be encoded.
func internalError(id jsonrpc.ID) []byte {
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: id,
		Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "zen could not encode the result"}})
	if err != nil {
		return []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"zen could not encode the result"}}`)
	}
	return msg
}
