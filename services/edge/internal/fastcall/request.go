package fastcall

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// versionModern is the protocol version from which a request carries its
// version and the client's capabilities in _meta, names its method and
// tool in headers, and a result carries resultType and the server's name.
const versionModern = "2026-07-28"

// versions are the protocol versions whose calls are answered here, those
// the SDK's answers were compared with. Other versions go to the SDK.
var versions = []string{versionModern, "2025-11-25", "2025-06-18", "2025-03-26"}

// The headers the SDK reads on a call.
const (
	headerVersion     = "Mcp-Protocol-Version"
	headerMethod      = "Mcp-Method"
	headerName        = "Mcp-Name"
	headerLastEventID = "Last-Event-ID"
)

// call is a tools/call this package answers.
type call struct {
	version   string
	id        jsonrpc.ID
	name      string
	arguments json.RawMessage
	meta      mcp.Meta
	handler   mcp.ToolHandler
}

// modern tells whether the call speaks the 2026-07-28 protocol.
func (c call) modern() bool { return c.version == versionModern }

// candidate tells, from r's headers alone, whether r may be a call answered
// here, and its protocol version. Each check is one the SDK makes before
// it reads the body, or stricter.
func candidate(r *http.Request) (string, bool) {
	if r.Method != http.MethodPost || r.Body == nil || len(r.Header.Values(headerLastEventID)) > 0 {
		return "", false
	}
	if !isJSON(r.Header.Get("Content-Type")) {
		return "", false
	}
	if !acceptsBoth(r.Header.Values("Accept")) {
		return "", false
	}
	version := r.Header.Get(headerVersion)
	if !slices.Contains(versions, version) {
		return "", false
	}
	if version == versionModern && (r.Header.Get(headerMethod) != "tools/call" || r.Header.Get(headerName) == "") {
		return "", false
	}
	return version, true
}

// isJSON tells whether a Content-Type is JSON's, as the SDK reads it; the
// type clients send, as they send it, without parsing it.
func isJSON(contentType string) bool {
	if contentType == "application/json" {
		return true
	}
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && media == "application/json"
}

// acceptsBoth tells whether Accept names both JSON and an event stream, by
// the SDK's reading of it (streamableAccepts).
func acceptsBoth(values []string) bool {
	var jsonOK, streamOK bool
	for _, value := range values {
		for rest := value; rest != ""; {
			var item string
			item, rest, _ = strings.Cut(rest, ",")
			base, _, _ := strings.Cut(item, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "application/json", "application/*":
				jsonOK = true
			case "text/event-stream", "text/*":
				streamOK = true
			case "*/*":
				jsonOK, streamOK = true, true
			}
		}
	}
	return jsonOK && streamOK
}

// parse reads body as a call answered here: one JSON-RPC request object
// with only the members JSON-RPC defines, calling a tool tools knows, with
// a plain id, arguments that are an object, no progress token, and the
// _meta its version requires. The envelope and its params are read from
// the scan that found the body plain, once it is known to be JSON.
func parse(r *http.Request, version string, body []byte, server Server) (call, bool) {
	c := call{version: version}
	sh, plain := plainShape(body)
	if !plain || sh.envelope == nil || !json.Valid(body) { // nil: not an object
		return c, false
	}
	msg := sh.envelope
	if !msg.only("jsonrpc", "id", "method", "params") {
		return c, false
	}
	if !isString(msg.get("jsonrpc"), "2.0") || !isString(msg.get("method"), "tools/call") {
		return c, false
	}
	var ok bool
	if c.id, ok = parseID(msg.get("id")); !ok {
		return c, false
	}
	params := sh.params
	if params == nil || !params.only("_meta", "name", "arguments") {
		return c, false // params absent, null or not an object
	}
	if json.Unmarshal(params.get("name"), &c.name) != nil || c.name == "" {
		return c, false
	}
	if c.handler, ok = server.PlainTool(c.name); !ok {
		return c, false // the SDK's unknown-tool answer
	}
	if args := params.get("arguments"); args != nil {
		if !isObject(args) {
			return c, false
		}
		c.arguments = args
	}
	if raw := params.get("_meta"); raw != nil {
		if c.meta, ok = parseMeta(raw); !ok {
			return c, false
		}
	}
	if c.modern() {
		return c, modernMeta(c.meta, version) && r.Header.Get(headerName) == c.name
	}
	// A 2025-era request that names a protocol version in _meta is checked
	// against its header by the SDK.
	_, named := c.meta[mcp.MetaKeyProtocolVersion]
	return c, !named
}

// parseMeta reads a request's _meta, an object.
func parseMeta(raw json.RawMessage) (mcp.Meta, bool) {
	if !isObject(raw) {
		return nil, false
	}
	var meta mcp.Meta
	if json.Unmarshal(raw, &meta) != nil {
		return nil, false
	}
	return meta, true
}

// modernMeta tells whether a 2026-07-28 request's _meta holds what the
// SDK requires: the version its header names, the client's capabilities,
// and, if any, a well-formed description of the client.
func modernMeta(meta mcp.Meta, version string) bool {
	if v, ok := meta[mcp.MetaKeyProtocolVersion].(string); !ok || v != version {
		return false
	}
	var caps mcp.ClientCapabilities
	if !decodesAs(meta[mcp.MetaKeyClientCapabilities], &caps) {
		return false
	}
	if info, given := meta[mcp.MetaKeyClientInfo]; given {
		var impl mcp.Implementation
		return decodesAs(info, &impl)
	}
	return true
}

// decodesAs tells whether v, a decoded JSON object, decodes into into.
func decodesAs(v any, into any) bool {
	if _, ok := v.(map[string]any); !ok {
		return false
	}
	raw, err := json.Marshal(v)
	return err == nil && json.Unmarshal(raw, into) == nil
}

// parseID reads a call's id as the SDK does, for the ids it reads without
// loss: a string, or an integer JSON states exactly.
func parseID(raw json.RawMessage) (jsonrpc.ID, bool) {
	if len(raw) == 0 {
		return jsonrpc.ID{}, false // a notification
	}
	var id any
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return jsonrpc.ID{}, false
		}
		id = s
	} else {
		n, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil || n > 1<<53 || n < -(1<<53) || string(raw) != strconv.FormatInt(n, 10) {
			return jsonrpc.ID{}, false
		}
		id = float64(n)
	}
	parsed, err := jsonrpc.MakeID(id)
	return parsed, err == nil
}

// isString tells whether raw is the JSON string want.
func isString(raw json.RawMessage, want string) bool {
	var s string
	return len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil && s == want
}

// isObject tells whether raw is a JSON object.
func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}
