package fastcall

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"time"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/edge/internal/mcpserver"
)

// Server is the MCP server whose calls are answered here.
type Server interface {
	// PlainTool returns the handler the SDK calls for the named tool, if
	// the SDK would call it with nothing but the request: not for a tool
	// whose schema binds arguments to headers (x-mcp-header).
	PlainTool(name string) (mcp.ToolHandler, bool)
	// Implementation is what a 2026-07-28 result names in its _meta. New
	// reads it once: it must not change.
	Implementation() *mcp.Implementation
}

// Handler runs the tools/call requests it recognises and hands every other
// request to the SDK's handler.
type Handler struct {
	sdk    http.Handler
	server Server
	// serverInfo is server.Implementation() as a 2026-07-28 result's _meta
	// names it.
	serverInfo []byte
}

// New returns a handler in front of sdk, the SDK's stateless streamable
// HTTP handler for server. It answers as that handler does with the
// options zen gives it (server.Handler: no JSON responses, no event store,
// every protocol version, no receiving middleware that touches tools/call);
// a change to those is a change to what it must answer.
func New(sdk http.Handler, server Server) *Handler {
	h := &Handler{sdk: sdk, server: server}
	// As the SDK's encoder writes it: a map value in _meta, HTML escaped.
	h.serverInfo, _ = json.Marshal(server.Implementation())
	return h
}

// ServeHTTP answers r if it is a call answered here, or has the SDK answer
// it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	version, ok := candidate(r)
	if !ok {
		h.sdk.ServeHTTP(w, r)
		return
	}
	body, read, err := wholeBody(r)
	if err != nil {
		// The SDK reads the body again and answers the failure its way.
		r.Body = readBack{io.MultiReader(bytes.NewReader(body), failing{err}), r.Body}
		h.sdk.ServeHTTP(w, r)
		return
	}
	c, ok := parse(r, version, body, h.server)
	if !ok {
		if read {
			r.Body = readBack{bytes.NewReader(body), r.Body}
		}
		h.sdk.ServeHTTP(w, r)
		return
	}
	h.run(w, r, c)
}

// wholeBody is r's body, and whether it was read here: a body a handler in
// front read whole (streamhttp.Peeked) is taken as it is and left unread.
func wholeBody(r *http.Request) ([]byte, bool, error) {
	if p, ok := r.Body.(interface{ Whole() []byte }); ok {
		if body := p.Whole(); body != nil {
			return body, false, nil
		}
	}
	body, err := io.ReadAll(r.Body)
	return body, true, err
}

// run calls the tool's handler as the SDK would, on r's context (which
// ends when the client leaves), and writes its answer as the SDK would.
func (h *Handler) run(w http.ResponseWriter, r *http.Request, c call) {
	req := &mcp.CallToolRequest{
		Params: &mcp.CallToolParamsRaw{Meta: c.meta, Name: c.name, Arguments: c.arguments},
		Extra:  &mcp.RequestExtra{TokenInfo: mcpauth.TokenInfoFromContext(r.Context()), Header: r.Header},
	}
	// The SDK sets these before the call runs, for every answer it writes.
	header := w.Header()
	header.Set("Cache-Control", "no-cache, no-transform")
	header.Set("Content-Type", "text/event-stream")
	header.Set("Connection", "keep-alive")
	events := &eventStream{w: w}
	ctx, after := mcpserver.WithAfterAnswer(mcpserver.WithProgressSink(r.Context(), events.progress))
	// What the call left for later waits for its answer to be out, not
	// the client for it: an answer written is flushed first. One with its
	// length is then whole at the client; on a stream progress opened,
	// the answer's event is, and the stream's end follows the work. A
	// handler that panicked wrote none, and none is flushed for it. A
	// client that does not read holds the work up for afterAnswerWait at
	// most: it is then done beside the write.
	var late *time.Timer // set as the answer is written
	send := func(answer []byte) {
		late = time.AfterFunc(afterAnswerWait, after.Run)
		_, _ = w.Write(answer)
		_ = http.NewResponseController(w).Flush()
	}
	defer func() {
		if late == nil || late.Stop() { // else running, or done
			after.Run()
		}
	}()
	res, err := c.handler(ctx, req)
	events.close()
	msg, status := h.answer(c, res, err)
	if status != 0 {
		// After progress events this changes neither the status nor the
		// type, already sent, and the JSON goes out unframed: the SDK's
		// stream does the same (deliverLocked). No such error follows
		// progress today: the one a handler returns (an unknown tool) comes
		// first, and fastcall takes only known tools.
		header.Set("Content-Type", "application/json")
		// Its length, as net/http would set it for an answer not flushed.
		header.Set("Content-Length", strconv.Itoa(len(msg)))
		w.WriteHeader(status)
		send(msg)
		return
	}
	// With its length, an answer that opens the stream goes out whole,
	// head and event in one write while they fit the server's buffer,
	// where the SDK flushes the event and then writes the end of a chunked
	// stream. Once progress or a keep-alive comment has opened the stream,
	// the head is out and the length changes nothing: the answer's event
	// is flushed, and the chunked stream ends as the call returns.
	answer := event(msg)
	header.Set("Content-Length", strconv.Itoa(len(answer)))
	send(answer)
}

// afterAnswerWait is how long what a call left waits for its answer to
// reach a client that reads slowly, or not at all.
const afterAnswerWait = time.Second

// answer is the JSON-RPC response to c, and the HTTP status it goes out
// with when it is not an SSE event: the 2026-07-28 protocol sends some
// errors as plain JSON with a status of their own.
func (h *Handler) answer(c call, res *mcp.CallToolResult, err error) ([]byte, int) {
	if err == nil && (res == nil || res.InputRequests != nil || res.RequestState != "") {
		// zen's handlers never do this, and the SDK would answer it
		// otherwise (input_required): a fault to report, not to mimic.
		return internalError(c.id), 0
	}
	if err != nil {
		msg, encErr := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: c.id, Error: err})
		if encErr != nil {
			return internalError(c.id), 0
		}
		return msg, errorStatus(c.modern(), err)
	}
	if msg, ok := h.plainAnswer(c, res); ok {
		return msg, 0
	}
	result, err := h.encodeResult(c.modern(), res)
	if err != nil {
		return internalError(c.id), 0
	}
	msg, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: c.id, Result: result})
	if err != nil {
		return internalError(c.id), 0
	}
	return msg, 0
}

// readBack is a body put back for the SDK to read, closing the original.
type readBack struct {
	io.Reader
	io.Closer
}

// failing is a reader that fails as the original body did.
type failing struct{ err error }

func (f failing) Read([]byte) (int, error) { return 0, f.err }
