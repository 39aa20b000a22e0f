package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Refusals answer a message the server never got to handle: too large,
// not JSON, not JSON-RPC. They are worded here, beside describe, so that
// every failure a client can meet is in one place, whichever transport
// refused the message.

// TooLarge refuses a message of size bytes (-1 when unknown) over limit.
func TooLarge(size, limit int64) *jsonrpc.Error {
	was := "it is over"
	if size >= 0 {
		was = fmt.Sprintf("it is %s, over", mebibytes(size))
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("zen refused this message: %s the "+
		"%s limit for one MCP message. Send large text as a file instead: save it and pass its absolute path (a long "+
		"prompt as prompt.txt in absolute_file_paths), and images as file paths rather than data URLs.", was,
		mebibytes(limit))}
}

// ParseError refuses a message that is not JSON.
func ParseError(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: fmt.Sprintf("zen could not parse this message as "+
		"JSON (%v). Send each JSON-RPC message whole: on stdio, one message per line.", err)}
}

// InvalidRequest refuses JSON that is not a JSON-RPC message.
func InvalidRequest(err error) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: fmt.Sprintf("zen could not read this message "+
		"as JSON-RPC 2.0 (%v). Send a request, notification or response with \"jsonrpc\": \"2.0\".", err)}
}

// BatchRefused refuses a JSON-RPC batch.
func BatchRefused() *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "zen takes one JSON-RPC message at a time: MCP " +
		"dropped batches in its 2025-06-18 revision. Send each message on its own line."}
}

func mebibytes(n int64) string {
	if n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// ErrorLine encodes a JSON-RPC error response to the request with id (nil
// when it could not be read), ending in a newline.
func ErrorLine(id json.RawMessage, e *jsonrpc.Error) []byte {
	if !validID(id) {
		id = json.RawMessage("null")
	}
	line, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc.Error  `json:"error"`
	}{"2.0", id, e})
	if err != nil { // cannot happen: every part is plain JSON
		line = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"zen could not encode an error"}}`)
	}
	return append(line, '\n')
}

// WriteRefusal answers an HTTP request with a JSON-RPC error and the
// given status: clients (the go-sdk's and the TypeScript SDK's) surface the
// error's message from a non-2xx body, and its id lets them match it to the
// call they made.
func WriteRefusal(w http.ResponseWriter, code int, head []byte, e *jsonrpc.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(ErrorLine(IDOf(head), e))
}

// IDOf reads the id of the JSON-RPC message that head begins, or nil. It
// reads only as far as it must: a message refused for its size is not
// read whole to find out whom to answer, and clients put the id first.
func IDOf(head []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(head))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil // cut off inside a value: the id, if any, comes later
		}
		if key == "id" && validID(value) {
			return value
		}
	}
	return nil
}

// validID accepts what JSON-RPC allows as an id: a string or a number.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}
