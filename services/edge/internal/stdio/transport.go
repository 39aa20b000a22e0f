package stdio

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/edge/internal/envelope"
	"github.com/zenmcp/zen/services/edge/internal/mcpserver"
)

// MaxLine is the longest message taken, as over HTTP: a longer line is
// refused and skipped, never held in memory whole.
const MaxLine = 4 << 20

// Transport is the go-sdk's IOTransport with every line screened first. The
// SDK's reader stops at the first line it cannot decode, which ends the
// session with no reply; JSON-RPC asks for an error (-32700 for a line that
// is not JSON, id null) and for the server to go on reading.
type Transport struct {
	In  io.ReadCloser
	Out io.Writer
	// AnswerBeforeEOF is how long the end of In waits for the requests
	// read so far to be answered before the session hears of it, which
	// cancels them: a script that writes its requests and closes stdin
	// (printf ... | zen stdio) is answered. A call longer than that is
	// cancelled with the session.
	AnswerBeforeEOF time.Duration

	ledger ledger
}

// Connect implements mcp.Transport.
func (t *Transport) Connect(ctx context.Context) (mcp.Connection, error) {
	out := &lockedWriter{w: t.Out, ledger: &t.ledger}
	in := &screen{r: bufio.NewReaderSize(t.In, 64<<10), c: t.In, out: out, ledger: &t.ledger, atEOF: func() {
		ctx, cancel := context.WithTimeout(context.Background(), t.AnswerBeforeEOF)
		defer cancel()
		t.WaitAnswered(ctx)
	}}
	// The screen has bounded every line already.
	return (&mcp.IOTransport{Reader: in, Writer: out, MaxLineLength: -1}).Connect(ctx)
}

// lockedWriter writes each message whole: the SDK and the screen both
// answer on it, and the SDK writes a message with one Write.
type lockedWriter struct {
	mu     sync.Mutex
	w      io.Writer
	ledger *ledger
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if err == nil && isResponse(p) {
		l.ledger.answer()
	}
	return n, err
}

// Close leaves stdout open: the process may still log its exit there.
func (l *lockedWriter) Close() error { return nil }

// screen hands the SDK only lines that hold one JSON-RPC message, and
// answers every other line itself.
type screen struct {
	r       *bufio.Reader
	c       io.Closer
	out     io.Writer
	pending []byte // the rest of the line being handed over
	ledger  *ledger
	atEOF   func() // before the end of the input is reported
}

func (s *screen) Read(p []byte) (int, error) {
	for len(s.pending) == 0 {
		line, err := s.next()
		if err != nil {
			return 0, err
		}
		s.pending = line
	}
	n := copy(p, s.pending)
	s.pending = s.pending[n:]
	return n, nil
}

func (s *screen) Close() error { return s.c.Close() }

// next returns the next line fit for the SDK, newline included, answering
// the lines in between that are not.
func (s *screen) next() ([]byte, error) {
	for {
		line, size, err := s.readLine()
		if size > MaxLine {
			s.ledger.ask() // refuse answers it
			// The id, from the line's head, lets the client fail the call
			// at once instead of waiting for a reply.
			s.refuse(mcpserver.IDOf(line), mcpserver.TooLarge(size, MaxLine))
		} else if msg := bytes.TrimSpace(line); len(msg) > 0 {
			if decoded, id, refusal := check(msg); refusal != nil {
				s.ledger.ask() // refuse answers it
				s.refuse(id, refusal)
			} else {
				// A call, as the SDK reads it: the SDK will answer it.
				if req, ok := decoded.(*jsonrpc.Request); ok && req.IsCall() {
					s.ledger.ask()
				}
				return append(msg, '\n'), nil
			}
		}
		if errors.Is(err, io.EOF) {
			s.atEOF()
		}
		if err != nil {
			return nil, err
		}
	}
}

// readLine reads up to the next newline. Past MaxLine it reads on to the
// line's end without keeping more: it returns the line's first MaxLine
// bytes and its whole size.
func (s *screen) readLine() (line []byte, size int64, err error) {
	for {
		chunk, err := s.r.ReadSlice('\n')
		if size+int64(len(chunk)) <= MaxLine {
			line = append(line, chunk...)
		}
		size += int64(len(chunk))
		if !errors.Is(err, bufio.ErrBufferFull) {
			return line, size, err
		}
	}
}

// check decodes msg as the SDK will, or says why it is not one JSON-RPC
// message the SDK can take, and the id to answer (nil for null).
func check(msg []byte) (jsonrpc.Message, json.RawMessage, *jsonrpc.Error) {
	if !json.Valid(msg) {
		var v any
		err := json.Unmarshal(msg, &v)             // for its words: Valid only says no
		return nil, nil, mcpserver.ParseError(err) // JSON-RPC: a parse error's id is null
	}
	if msg[0] == '[' {
		return nil, nil, mcpserver.BatchRefused()
	}
	decoded, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return nil, mcpserver.IDOf(msg), mcpserver.InvalidRequest(err)
	}
	return decoded, nil, nil
}

// refuse answers a line with e; a failed write is left for the SDK's next
// write to report.
func (s *screen) refuse(id json.RawMessage, e *jsonrpc.Error) {
	_, _ = s.out.Write(mcpserver.ErrorLine(id, e))
}

// ledger counts the requests read and the answers written, so a server
// that stops can wait until every request it took has its answer on the
// wire: the SDK writes an answer after its handler returns, and closing the
// connection in between loses it.
type ledger struct {
	mu              sync.Mutex
	asked, answered int
	changed         chan struct{}
}

func (l *ledger) ask()    { l.add(1, 0) }
func (l *ledger) answer() { l.add(0, 1) }

func (l *ledger) add(asked, answered int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.asked += asked
	l.answered += answered
	if l.changed != nil {
		close(l.changed)
		l.changed = nil
	}
}

// WaitAnswered returns once every request read so far has its answer
// written, or when ctx ends.
func (t *Transport) WaitAnswered(ctx context.Context) {
	l := &t.ledger
	for {
		l.mu.Lock()
		if l.answered >= l.asked {
			l.mu.Unlock()
			return
		}
		if l.changed == nil {
			l.changed = make(chan struct{})
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

func isResponse(msg []byte) bool {
	m, ok := envelope.Read(msg)
	return ok && m.IsResponse()
}
