package fastcall

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// eventStream writes a call's notifications to its answer's event stream
// while the call runs, as the SDK's session writes them: each an event of
// its own, sent at once (a heartbeat that waited in a buffer would not
// reset the client's timeout).
type eventStream struct {
	w http.ResponseWriter
	// mu guards closed: the handler's progress reporter already sends one
	// notification at a time.
	mu     sync.Mutex
	closed bool // the call has returned: its answer comes next, nothing after
}

// progress writes p as a notifications/progress event.
func (e *eventStream) progress(p *mcp.ProgressNotificationParams) {
	// As the SDK's connection encodes a notification's params: without
	// escaping HTML.
	var params bytes.Buffer
	enc := json.NewEncoder(&params)
	enc.SetEscapeHTML(false)
	if enc.Encode(p) != nil {
		return // a token the SDK could not encode either: it sends nothing
	}
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Request{Method: "notifications/progress",
		Params: bytes.TrimRight(params.Bytes(), "\n")})
	if err != nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return
	}
	_, _ = e.w.Write(event(msg))
	_ = http.NewResponseController(e.w).Flush()
}

// close ends the notifications: the SDK refuses those of a call that has
// answered.
func (e *eventStream) close() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.closed = true
}

// event frames msg as the SDK's one SSE event for it.
func event(msg []byte) []byte {
	const head, tail = "event: message\ndata: ", "\n\n"
	b := make([]byte, 0, len(head)+len(msg)+len(tail))
	return append(append(append(b, head...), msg...), tail...)
}
