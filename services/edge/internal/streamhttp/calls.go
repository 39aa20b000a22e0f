package streamhttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"

	mcpauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/zenmcp/zen/services/edge/internal/envelope"
)

// ErrClientCancelled is the cause a call's lifetime ends with when the
// client sent notifications/cancelled for it.
var ErrClientCancelled = errors.New("the client cancelled the call")

// maxPeek bounds how much of a request body Calls reads to learn what it
// is: no more than LimitBody lets through, so a body is never read past
// the size the endpoint takes.
const maxPeek = MaxBody

// Calls tracks the tools/call requests in flight on this process, so that:
//   - each call's context carries its lifetime (Lifetime), which ends when
//     the client drops the call's HTTP exchange: the SDK does not cancel
//     2025-era stateless calls on its own;
//   - a notifications/cancelled POST ends the lifetime of the call it names
//     in the same session, and no other.
//
// A session is what Calls hands a 2025-era client on initialize (the
// Mcp-Session-Id header), together with the bearer token's client. JSON-RPC
// ids are no secret (every SDK counts from 0 or 1) and a token may be
// shared or absent, so neither names a call on its own. A call sent without
// a session (2026-07-28 clients, which cancel by closing the stream) ends
// only with its own exchange.
//
// A cancellation ends the tool's work, not the HTTP exchange: the SDK still
// writes the call's reply, a JSON-RPC error on its stream, where an empty
// response would make a client drop its whole session.
type Calls struct {
	mu       sync.Mutex
	inFlight map[callKey][]*inFlightCall
}

type inFlightCall struct {
	cancel context.CancelCauseFunc
}

// NewCalls returns an empty tracker.
func NewCalls() *Calls {
	return &Calls{inFlight: map[callKey][]*inFlightCall{}}
}

type callKey struct {
	session, client, id string
}

type lifetimeKey struct{}

// Lifetime is the context that ends with the tools/call carrying ctx's
// request (its client left or cancelled it), or nil outside one.
func Lifetime(ctx context.Context) context.Context {
	life, _ := ctx.Value(lifetimeKey{}).(context.Context)
	return life
}

// Wrap tracks calls through next. The calls of a batch (a 2025-03-26
// client may send one) share the batch's lifetime: the SDK runs them with
// the request's context, so a cancellation of any ends them all.
func (c *Calls) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var life context.Context
		var cancel context.CancelCauseFunc
		for _, msg := range peek(r) {
			switch {
			case msg.Method == "initialize" && len(msg.ID) > 0:
				w.Header().Set(SessionHeader, newSessionID())
			case msg.Method == "notifications/cancelled" && len(msg.RequestID) > 0:
				if key, ok := keyOf(r, msg.RequestID); ok {
					c.cancel(key)
				}
			case msg.Method == "tools/call" && len(msg.ID) > 0:
				if life == nil {
					life, cancel = context.WithCancelCause(r.Context())
					defer cancel(nil)
				}
				if key, ok := keyOf(r, msg.ID); ok {
					call := &inFlightCall{cancel: cancel}
					c.add(key, call)
					defer c.remove(key, call)
				}
			}
		}
		if life != nil {
			r = r.WithContext(context.WithValue(r.Context(), lifetimeKey{}, life))
		}
		next.ServeHTTP(w, r)
	})
}

// peek decodes the JSON-RPC messages of the body (one, or a batch's) and
// puts the body back for the handler, as a *Peeked.
func peek(r *http.Request) []envelope.Message {
	if r.Method != http.MethodPost || r.Body == nil {
		return nil
	}
	head, err := readHead(r.Body, r.ContentLength)
	// What follows the head: nothing, for a body read whole (the server
	// closes the original when a response's head goes out first, as
	// KeepAlive opens a stalled call's stream, and a read of it then
	// fails); the same error, for a body that failed (after its error,
	// net/http's body of a declared length reads as ended, so the head
	// would pass for the whole of a shorter body); else the rest.
	rest := io.Reader(r.Body)
	p := &Peeked{Closer: r.Body}
	switch {
	case err != nil:
		rest = failedRead{err}
	case len(head) <= maxPeek:
		rest = http.NoBody
		p.whole = head
	}
	p.Reader = io.MultiReader(bytes.NewReader(head), rest)
	r.Body = p
	if err != nil || len(head) > maxPeek {
		return nil
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		var batch []json.RawMessage
		if envelope.First(trimmed, &batch) != nil {
			return nil
		}
		msgs := make([]envelope.Message, 0, len(batch))
		for _, raw := range batch {
			if msg, ok := envelope.Read(raw); ok {
				msgs = append(msgs, msg)
			}
		}
		return msgs
	}
	if msg, ok := envelope.Read(trimmed); ok {
		return []envelope.Message{msg}
	}
	return nil // garbage is the SDK's to answer
}

// Peeked is a request body Calls read ahead of the handler, put back.
type Peeked struct {
	io.Reader
	io.Closer
	whole []byte
}

// Whole is the body, when Calls read it to its end, else nil. A handler
// that takes it need not read the body again, and leaves it unread for
// the next.
func (p *Peeked) Whole() []byte { return p.whole }

// maxPresized bounds the buffer readHead sizes from a declared length
// before a byte has come: a client may declare 4 MiB and send nothing.
const maxPresized = 64 << 10

// readHead reads body up to one byte past maxPeek, into a buffer of the
// declared size when there is one (-1 when not) up to maxPresized: a
// call's body is read with no growing and copying.
func readHead(body io.Reader, declared int64) ([]byte, error) {
	size := 512
	if declared >= 0 {
		size = int(min(declared+1, maxPresized)) // +1: room to see the end without growing
	}
	buf := make([]byte, 0, size)
	limited := io.LimitReader(body, maxPeek+1)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := limited.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// failedRead is a reader that fails as a body did.
type failedRead struct{ err error }

func (f failedRead) Read([]byte) (int, error) { return 0, f.err }

// keyOf names the call with JSON-RPC id in r's session; false when r has
// no session, so the id names nothing.
func keyOf(r *http.Request, id json.RawMessage) (callKey, bool) {
	k := callKey{session: sessionOf(r), id: string(bytes.TrimSpace(id))}
	if info := mcpauth.TokenInfoFromContext(r.Context()); info != nil {
		k.client = info.UserID
	}
	return k, k.session != ""
}

func (c *Calls) add(k callKey, call *inFlightCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inFlight[k] = append(c.inFlight[k], call)
}

func (c *Calls) remove(k callKey, call *inFlightCall) {
	c.mu.Lock()
	defer c.mu.Unlock()
	list := slices.DeleteFunc(c.inFlight[k], func(x *inFlightCall) bool { return x == call })
	if len(list) == 0 {
		delete(c.inFlight, k)
	} else {
		c.inFlight[k] = list
	}
}

// cancel ends the call k names. When k names two calls (a client reused an
// id in flight), it ends neither: a missed cancellation costs a model call,
// a wrong one loses an answer.
func (c *Calls) cancel(k callKey) {
	c.mu.Lock()
	list := c.inFlight[k]
	var only *inFlightCall
	if len(list) == 1 {
		only = list[0]
	}
	c.mu.Unlock()
	if only != nil {
		only.cancel(ErrClientCancelled)
	}
}
