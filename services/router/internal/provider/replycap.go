package provider

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
)

// A provider's reply is bounded by what the model may say: a reply far past
// the model's output limit is a provider gone wrong (a loop, a proxy's
// error page, a flood), and reading it whole would cost memory without
// limit. The bound is generous, in bytes, so no real answer is cut.
const (
	// bytesPerToken is what one output token may take at most: tokens
	// average 3 to 4 bytes, and few run past 16.
	bytesPerToken = 16
	// minReplyBytes is the least any reply may take, so a model with a
	// small output limit is never cut short by the margin's arithmetic.
	minReplyBytes = 256 << 10
	// unknownOutputTokens is assumed when neither the catalogue nor the
	// call gives an output limit.
	unknownOutputTokens = 128_000
	// envelope is how much larger than its text a reply's body may be:
	// JSON escaping, the envelope around the text, reasoning sent beside it.
	envelope = 4
	// streamFraming is how much larger than its text a whole stream may
	// be: every few characters of text come in an event of their own.
	streamFraming = 64
)

// errReplyTooLarge ends the reading of a reply past its limit.
var errReplyTooLarge = errors.New("reply too large")

// replyGuard holds one call's limits, in its context, for the transport
// that reads the body and for the loops that gather streamed text.
type replyGuard struct {
	tokens int64 // the output limit the bound derives from
	text   int64 // most bytes of text
	// body and line are the most bytes of body and of one line of it (one
	// stream event; 0 for no limit). A streaming call starts with a
	// stream's and gets a whole answer's (readWhole) before it reads a body
	// whole; atomic, as the transport reads them while the call sets them.
	body, line atomic.Int64
	tripped    atomic.Bool
}

type replyGuardKey struct{}

func newReplyGuard(req Request) *replyGuard {
	tokens := max(req.MaxTokens, req.MaxOutputTokens)
	if tokens <= 0 {
		tokens = unknownOutputTokens
	}
	g := &replyGuard{tokens: tokens, text: max(tokens*bytesPerToken, minReplyBytes)}
	if req.Stream {
		g.body.Store(g.text * streamFraming)
		g.line.Store(g.text * envelope)
	} else {
		g.readWhole()
	}
	return g
}

// readWhole gives the call a whole answer's limits, the ones it has when
// asked without streaming. A streaming call takes them before it reads
// anything but an event stream: a JSON completion that came back anyway,
// an error, the call made again after a refusal to stream. Read under a
// stream's limits, such a body (decoded whole, into memory) could run to
// 64 times the text in short lines.
func (g *replyGuard) readWhole() {
	g.body.Store(g.text * envelope)
	g.line.Store(0)
}

// readWhole is the guard's readWhole for the call in ctx, if it has one.
func readWhole(ctx context.Context) {
	if g, ok := ctx.Value(replyGuardKey{}).(*replyGuard); ok {
		g.readWhole()
	}
}

// allow says whether text of n bytes is within the limit, and marks the
// call cut off when it is not.
func (g *replyGuard) allow(n int) bool {
	if g == nil || int64(n) <= g.text {
		return true
	}
	g.tripped.Store(true)
	return false
}

// textFits is allow for the guard in ctx; its error ends a streaming loop.
func textFits(ctx context.Context, n int) error {
	if g, _ := ctx.Value(replyGuardKey{}).(*replyGuard); !g.allow(n) {
		return errReplyTooLarge
	}
	return nil
}

// capReply runs one provider call under the reply's limits and reports a
// reply that went past them as an Error, whatever the client library made
// of the read that was stopped.
func capReply(ctx context.Context, label string, req Request,
	call func(context.Context) (Result, error)) (Result, error) {
	g := newReplyGuard(req)
	res, err := call(context.WithValue(ctx, replyGuardKey{}, g))
	if g.tripped.Load() || err == nil && !g.allow(len(res.Content)) {
		return Result{}, &Error{Provider: label, Model: req.Model, Msg: fmt.Sprintf("the reply was cut off past %d "+
			"KiB: more than the model's output limit of %d tokens allows (with a wide margin). Ask for a shorter "+
			"answer, or split the work into smaller requests", g.text>>10, g.tokens)}
	}
	return res, err
}

// replyCapTransport bounds the bodies of replies made under a guard.
type replyCapTransport struct{ next http.RoundTripper }

func (t replyCapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	if g, ok := r.Context().Value(replyGuardKey{}).(*replyGuard); ok && err == nil {
		if resp.StatusCode >= http.StatusBadRequest {
			g.readWhole() // an error is read whole, whatever was asked
		}
		resp.Body = &cappedBody{ReadCloser: resp.Body, g: g}
	}
	return resp, err
}

// cappedBody fails a read past the guard's body or line limit.
type cappedBody struct {
	io.ReadCloser
	g          *replyGuard
	total, run int64 // bytes read, and since the last newline
}

func (b *cappedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.total += int64(n)
	longest := b.run
	for chunk := p[:n]; ; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			b.run += int64(len(chunk))
			longest = max(longest, b.run)
			break
		}
		longest = max(longest, b.run+int64(i))
		b.run, chunk = 0, chunk[i+1:]
	}
	if line := b.g.line.Load(); b.total > b.g.body.Load() || line > 0 && longest > line {
		b.g.tripped.Store(true)
		// Closed here, as not every reader closes a body whose read
		// failed (go-openai leaves an error's open): the connection goes
		// rather than the server writing into it for ever.
		_ = b.ReadCloser.Close()
		return n, errReplyTooLarge
	}
	return n, err
}
