package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// The steady load of TestFaultsBetweenRoles: MCP clients, each continuing
// its own chat thread in a loop, and what each call came to.

const (
	// callTimeout is how long a client waits for one answer. Longer than
	// any fault lasts, so a call held up by a fault still gets zen's own
	// answer, and a call that gets none shows that zen gave none.
	callTimeout = 25 * time.Second
	// pace is the pause between one client's calls.
	pace = 50 * time.Millisecond
	// maxCallsPerClient bounds the loop, whatever the clock does.
	maxCallsPerClient = 5000
)

// Outcome kinds.
const (
	kindOK        = "ok"
	kindNotSaved  = "answered, not saved" // the answer came, with a note that it could not be saved
	kindZenError  = "zen error"           // zen answered with an error: a JSON-RPC error or a tool error
	kindEdgeLost  = "edge unreachable"    // the client could not reach its edge, or lost it mid-call
	kindNoAnswer  = "no answer"           // zen never answered within callTimeout
	markerPattern = `zf-c\d+-n\d+`
)

var markerRE = regexp.MustCompile(markerPattern)

// answerMarker is the fake model of the load: it answers each question by
// its marker, the last in the prompt (the history's markers come before
// the new input), after modelDelay.
func answerMarker(req fakemodel.Request) fakemodel.Reply {
	markers := markerRE.FindAllString(req.AllText(), -1)
	if len(markers) == 0 {
		return fakemodel.Reply{Content: "no marker"}
	}
	return fakemodel.Reply{Content: "answer for " + markers[len(markers)-1], Delay: modelDelay}
}

// outcome is what one call came to, as its client saw it.
type outcome struct {
	client     int
	phase      int // the fault that was running when the call ended
	marker     string
	thread     string // the thread the exchange went to, when the client knows it
	start, end time.Time
	kind       string
	msg        string // the error as the client got it, trace ids taken out
	detail     string // the whole error, for a failure's report
}

// acked is a call whose exchange zen said it kept: an answer without a note
// that it was not saved.
func (o outcome) acked() bool { return o.kind == kindOK }

// load is the set of clients and what they saw.
type load struct {
	edges   []string // MCP endpoints; a client moves to the next when its edge fails it
	httpc   *http.Client
	wd      string
	stop    chan struct{}
	wg      sync.WaitGroup
	mu      sync.Mutex
	results []outcome
}

func newLoad(edges []string, wd string) *load {
	return &load{edges: edges, wd: wd, stop: make(chan struct{}),
		httpc: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
}

// start runs n clients until halt.
func (l *load) start(n int) {
	for i := range n {
		c := &loadClient{l: l, id: i, edge: i % len(l.edges)}
		l.wg.Go(c.loop)
	}
}

// halt stops the clients and waits for their calls in flight.
func (l *load) halt() {
	close(l.stop)
	l.wg.Wait()
}

func (l *load) outcomes() []outcome {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]outcome(nil), l.results...)
}

// recovered says whether every one of the n clients has had an answer to a
// call it started at or after since.
func (l *load) recovered(n int, since time.Time) bool {
	seen := map[int]bool{}
	for _, o := range l.outcomes() {
		if o.acked() && !o.start.Before(since) {
			seen[o.client] = true
		}
	}
	return len(seen) == n
}

// loadClient is one MCP client continuing one thread at a time.
type loadClient struct {
	l      *load
	id     int
	edge   int
	cs     *mcp.ClientSession
	thread string
}

func (c *loadClient) loop() {
	defer func() {
		if c.cs != nil {
			c.cs.Close()
		}
	}()
	for n := 1; n <= maxCallsPerClient; n++ {
		select {
		case <-c.l.stop:
			return
		default:
		}
		o := c.call(fmt.Sprintf("zf-c%02d-n%05d", c.id, n))
		c.l.mu.Lock()
		c.l.results = append(c.l.results, o)
		c.l.mu.Unlock()
		select {
		case <-c.l.stop:
			return
		case <-time.After(pace):
		}
	}
}

// connect opens a session on the client's current edge.
func (c *loadClient) connect() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	transport := &mcp.StreamableClientTransport{Endpoint: c.l.edges[c.edge], HTTPClient: c.l.httpc,
		DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "zen-faults", Version: "1"}, nil).Connect(ctx, transport, nil)
	if err != nil {
		return err
	}
	c.cs = cs
	return nil
}

// failOver drops the session so the next call opens one on the next edge,
// as a client behind a load balancer would reach another replica.
func (c *loadClient) failOver() {
	if c.cs != nil {
		go c.cs.Close() // its edge may be gone; closing must not hold the loop up
		c.cs = nil
	}
	c.edge = (c.edge + 1) % len(c.l.edges)
}

// call asks one question on the client's thread (a new thread when it has
// none) and says what came of it.
func (c *loadClient) call(marker string) (o outcome) {
	o = outcome{client: c.id, marker: marker, thread: c.thread, start: time.Now()}
	defer func() { o.end = time.Now() }()
	if c.cs == nil {
		if err := c.connect(); err != nil {
			c.failOver()
			o.kind, o.msg, o.detail = kindEdgeLost, "could not connect: "+transportCause(err), err.Error()
			return o
		}
	}
	args := map[string]any{"prompt": "question " + marker, "model": "llama3.2", "working_directory_absolute_path": c.l.wd}
	if c.thread != "" {
		args["continuation_id"] = c.thread
	}
	ctx, cancel := context.WithTimeoutCause(context.Background(), callTimeout, errNoAnswer)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "chat", Arguments: args})
	if err != nil {
		o.detail = fmt.Sprintf("%v (cause: %v)", err, context.Cause(ctx))
	}
	var wire *jsonrpc.Error
	switch {
	case err == nil:
		c.answered(&o, res)
	case errors.As(err, &wire) && wire.Code != codeNeverSent:
		o.kind, o.msg = kindZenError, wire.Message
	case errors.Is(context.Cause(ctx), errNoAnswer):
		c.failOver()
		o.kind, o.msg = kindNoAnswer, fmt.Sprintf("no answer within %s", callTimeout)
	default:
		c.failOver()
		o.kind, o.msg = kindEdgeLost, transportCause(err)
	}
	o.msg = traceRE.ReplaceAllString(o.msg, "")
	return o
}

// answered reads a result: an answer that was kept, one that was not, or a
// tool error. The client moves to a new thread when zen offers no
// continuation of this one (it is full).
func (c *loadClient) answered(o *outcome, res *mcp.CallToolResult) {
	payload := decode(res)
	meta, _ := payload["metadata"].(map[string]any)
	offer, _ := payload["continuation_offer"].(map[string]any)
	switch {
	case res.IsError:
		o.kind, o.msg = kindZenError, fmt.Sprint(payload["content"])
		if payload == nil {
			o.msg = text(res)
		}
	case meta["continuation_error"] != nil:
		o.kind, o.msg = kindNotSaved, fmt.Sprint(meta["continuation_error"])
		// The thread is still there: the next question continues it,
		// unless it is full.
		if strings.Contains(o.msg, "MAX_CONVERSATION_TURNS") || strings.Contains(o.msg, "one thread may hold") {
			o.kind, c.thread = kindOK, ""
		}
	case offer != nil:
		o.kind = kindOK
		o.thread, _ = offer["continuation_id"].(string)
		c.thread = o.thread
	case c.thread != "":
		o.kind = kindOK // kept, and the thread is full: start another
		c.thread = ""
	default:
		o.kind, o.msg = kindZenError, "a new conversation got no continuation offer"
	}
}

// codeNeverSent is the SDK's own error for a request that never reached
// the server ("rejected by transport"): not an answer from zen.
const codeNeverSent = -32005

var traceRE = regexp.MustCompile(` ?\(?trace_id [0-9a-f]*\)?`)

var errNoAnswer = errors.New("no answer")

// transportCause shortens a transport error to what happened on the wire.
func transportCause(err error) string {
	s := err.Error()
	for _, cause := range []string{"connection refused", "connection reset", "request terminated without response",
		"unexpected EOF", "EOF", "broken pipe"} {
		if strings.Contains(s, cause) {
			return cause
		}
	}
	return s
}
