package envelope

import (
	"bytes"
	"encoding/json"
)

// Message is the part of a JSON-RPC message zen's transports look at.
type Message struct {
	ID     json.RawMessage // absent: nil
	Method string          // absent, or not a string: ""
	// RequestID is the request a notifications/cancelled names.
	RequestID json.RawMessage
}

// Read reads raw's envelope by its members' exact names, from the first
// JSON value in raw, as the SDK reads a message: what follows it is not
// read. False for anything but a JSON object.
func Read(raw []byte) (Message, bool) {
	var members map[string]json.RawMessage
	if First(raw, &members) != nil || members == nil {
		return Message{}, false
	}
	msg := Message{ID: members["id"]}
	_ = json.Unmarshal(members["method"], &msg.Method)
	var params map[string]json.RawMessage
	if msg.Method == "notifications/cancelled" && json.Unmarshal(members["params"], &params) == nil {
		msg.RequestID = params["requestId"]
	}
	return msg, true
}

// IsRequest reports whether m asks for an answer: a method and an id that
// is not null.
func (m Message) IsRequest() bool { return m.Method != "" && len(m.ID) > 0 && string(m.ID) != "null" }

// IsResponse reports whether m answers a request: an id and no method.
func (m Message) IsResponse() bool { return m.Method == "" && len(m.ID) > 0 }

// First decodes the first JSON value in raw into v, leaving what follows
// it, as the SDK's decoder does; json.Unmarshal refuses a value with
// anything after it.
func First(raw []byte, v any) error { return json.NewDecoder(bytes.NewReader(raw)).Decode(v) }
