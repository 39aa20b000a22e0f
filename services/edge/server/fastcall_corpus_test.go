package server

import (
	"fmt"
	"strings"
)

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
	deep := strings.Repeat(`{"a":`, 1100) + "1" + strings.Repeat("}", 1100)
	var members []string
	for i := range 40 {
		members = append(members, fmt.Sprintf(`"k%d":%d`, i, i))
	}
	manyMembers := strings.Join(members, ",")
	var reqs []rawRequest
	for _, v := range []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05", "", "2099-01-01"} {
		add := func(name string, header map[string]string, body string) {
			reqs = append(reqs, rawRequest{name: v + "/" + name, version: v, header: header, body: body})
		}
		// fast are the calls fastcall answers: on the versions it knows.
		fast := func(name string, header map[string]string, body string) {
			add(name, header, body)
			reqs[len(reqs)-1].fast = v != "2024-11-05" && v != "" && v != "2099-01-01"
		}
		fast("plain", nil, call("1", `"name":"chat",`+args))
		fast("string id", nil, call(`"abc"`, `"name":"chat",`+args))
		fast("empty string id", nil, call(`""`, `"name":"chat",`+args))
		fast("negative id", nil, call("-7", `"name":"chat",`+args))
		add("fractional id", nil, call("1.5", `"name":"chat",`+args))
		add("exponent id", nil, call("1e2", `"name":"chat",`+args))
		add("huge id", nil, call("9007199254740993", `"name":"chat",`+args))
		add("null id", nil, call("null", `"name":"chat",`+args))
		add("no id", nil, `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"chat",`+args+`}}`)
		add("unknown tool", nil, call("2", `"name":"nope",`+args))
		add("no name", nil, call("2", args))
		add("name not a string", nil, call("2", `"name":5,`+args))
		fast("no arguments", nil, call("3", `"name":"chat"`))
		fast("empty arguments", nil, call("3", `"name":"chat","arguments":{}`))
		add("arguments an array", nil, call("3", `"name":"chat","arguments":[1]`))
		add("arguments null", nil, call("3", `"name":"chat","arguments":null`))
		fast("bad arguments", nil, call("3", `"name":"chat","arguments":{"prompt":7}`))
		add("extra member", nil, `{"jsonrpc":"2.0","id":4,"method":"tools/call","extra":1,"params":{"name":"chat",`+
			args+`}}`)
		add("extra param", nil, call("4", `"name":"chat","extra":1,`+args))
		add("upper-case member", nil, `{"jsonrpc":"2.0","id":4,"Method":"tools/call","params":{"name":"chat",`+
			args+`}}`)
		add("json-rpc 1.0", nil, `{"jsonrpc":"1.0","id":4,"method":"tools/call","params":{"name":"chat",`+args+`}}`)
		add("batch", nil, `[`+call("5", `"name":"chat",`+args)+`]`)
		add("not json", nil, `{"jsonrpc":"2.0","id":5,`)
		fast("meta", nil, call("6", `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},`+
			`"name":"chat",`+args))
		fast("progress token", nil, call("6", `"_meta":{"progressToken":"p1"},"name":"chat",`+args))
		fast("integer progress token", nil, call("6", `"_meta":{"progressToken":-3},"name":"chat",`+args))
		fast("huge progress token", nil, call("6", `"_meta":{"progressToken":9007199254740993},"name":"chat",`+args))
		fast("progress token null", nil, call("6", `"_meta":{"progressToken":null},"name":"chat",`+args))
		fast("fractional progress token", nil, call("6", `"_meta":{"progressToken":1.5},"name":"chat",`+args))
		fast("long progress token", nil, call("6", `"_meta":{"progressToken":"`+strings.Repeat("t", 2000)+`"},`+
			`"name":"chat",`+args))
		fast("progress token an object", nil, call("6", `"_meta":{"progressToken":{"a":"<b>"}},"name":"chat",`+
			args))
		fast("progress token and trace", nil, call("6", `"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-`+
			`b7ad6b7169203331-01","progressToken":"\u2028é"},"name":"chat",`+args))
		add("meta an array", nil, call("6", `"_meta":[],"name":"chat",`+args))
		add("meta names a version", nil, call("6", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"},`+
			`"name":"chat",`+args))
		add("modern meta", nil, call("6", modernMeta+`,"name":"chat",`+args))
		add("accepts json only", map[string]string{"Accept": "application/json"}, call("7", `"name":"chat",`+args))
		fast("accepts anything", map[string]string{"Accept": "*/*"}, call("7", `"name":"chat",`+args))
		add("text body", map[string]string{"Content-Type": "text/plain"}, call("7", `"name":"chat",`+args))
		fast("json with charset", map[string]string{"Content-Type": "application/json; charset=utf-8"},
			call("7", `"name":"chat",`+args))
		add("last event id", map[string]string{"Last-Event-ID": "x"}, call("7", `"name":"chat",`+args))
		fast("deep arguments", nil, call("8", `"name":"chat","arguments":{"prompt":"hi","x":`+
			strings.Repeat("[", 990)+strings.Repeat("]", 990)+`}`))
		add("too deep arguments", nil, call("8", `"name":"chat","arguments":{"prompt":"hi","x":`+deep+`}`))
		add("two ids", nil, `{"jsonrpc":"2.0","id":8,"id":9,"method":"tools/call","params":{"name":"chat",`+args+`}}`)
		add("two params", nil, `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"nope"},`+
			`"params":{"name":"chat",`+args+`}}`)
		add("two names", nil, call("8", `"name":"nope","name":"chat",`+args))
		add("two metas", nil, call("8", `"_meta":{"progressToken":"p"},"_meta":{},"name":"chat",`+args))
		add("two meta members", nil, call("8", `"_meta":{"traceparent":"x","traceparent":"y"},"name":"chat",`+args))
		add("an escaped member", nil, call("8", `"n\u0061me":"chat",`+args))
		add("an escaped meta member", nil, call("8", `"_meta":{"progress\u0054oken":"p"},"name":"chat",`+args))
		add("many meta members", nil, call("8", `"_meta":{`+manyMembers+`},"name":"chat",`+args))
	}
	const v = "2026-07-28"
	add := func(name string, header map[string]string, body string) {
		reqs = append(reqs, rawRequest{name: v + "/" + name, version: v, header: header, body: body})
	}
	fast := func(name string, header map[string]string, body string) {
		add(name, header, body)
		reqs[len(reqs)-1].fast = true
	}
	fast("plain", modern, call("1", modernMeta+`,"name":"chat",`+args))
	fast("string id", modern, call(`"abc"`, modernMeta+`,"name":"chat",`+args))
	fast("no arguments", modern, call("1", modernMeta+`,"name":"chat"`))
	fast("bad arguments", modern, call("1", modernMeta+`,"name":"chat","arguments":{"prompt":7}`))
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
	fast("no client info", modern, call("3", `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",`+
		`"io.modelcontextprotocol/clientCapabilities":{}},"name":"chat",`+args))
	fast("progress token", modern, call("3", swapped(modernMeta, `"_meta":{`, `"_meta":{"progressToken":7,`)+
		`,"name":"chat",`+args))
	fast("progress token, bad arguments", modern, call("3", swapped(modernMeta, `"_meta":{`,
		`"_meta":{"progressToken":"t",`)+`,"name":"chat","arguments":{"prompt":7}`))
	add("input responses", modern, call("3", modernMeta+`,"name":"chat","inputResponses":{},`+args))
	add("batch", modern, `[`+call("5", modernMeta+`,"name":"chat",`+args)+`]`)
	add("two metas", modern, call("8", modernMeta+`,"_meta":{"progressToken":"p"},"name":"chat",`+args))
	add("too deep arguments", modern, call("8", modernMeta+`,"name":"chat","arguments":{"x":`+deep+`}`))
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
