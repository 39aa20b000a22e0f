package fakemodel

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/refused"
)

// Reply is what the server answers to one request.
type Reply struct {
	// Content is the assistant's text. Streamed replies send it word by word.
	Content string
	// FinishReason defaults to "stop".
	FinishReason string
	// Status, when not 200, answers with an OpenAI error body of that status.
	Status int
	// RetryAfter sets the Retry-After header on an error.
	RetryAfter string
	// Message replaces the error message of a failure.
	Message string
	// Blocked, for Gemini, answers that the prompt was blocked for this
	// reason.
	Blocked string
	// Raw, when set, is sent as the body as it is, with status 200 (or
	// Status).
	Raw string
	// Stall holds the request open until the client cancels it.
	Stall bool
	// Delay waits before answering (cut short if the client cancels).
	Delay time.Duration
	// ResetAfter, when positive, streams that many pieces of the reply and
	// then drops the connection, as a crashing proxy would.
	ResetAfter int
	// StallAfter, when positive, streams that many pieces of the reply and
	// then holds the stream open until the client cancels it.
	StallAfter int
	// PromptTokens and CompletionTokens fill the usage block; zero means a
	// count derived from the text.
	PromptTokens, CompletionTokens int
	// IgnoreStream answers a chat request that asks to stream with a plain
	// JSON completion, as servers that cannot stream do.
	IgnoreStream bool
	// RefuseStream answers a chat request that asks to stream with a 400
	// saying streaming is not supported (Message replaces the wording).
	RefuseStream bool
	// ContentType replaces the Content-Type of a successful chat answer,
	// as servers that label their replies wrongly do, or labels a Raw one
	// (text/event-stream for a raw stream of events).
	ContentType string
	// RawPieces, when set, are sent as the body one after another, each
	// flushed PieceDelay after the one before (the first after PieceDelay
	// too), with status 200 and ContentType: a stream whose timing a test
	// sets. Chat completions only: Gemini's and the responses API's
	// requests are answered as their own.
	RawPieces  []string
	PieceDelay time.Duration
}

// Message is one chat message as sent by the client.
type Message struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// Text returns the message text, joining the text parts of a multi-part
// message.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Request is one recorded request.
type Request struct {
	Method string
	Path   string
	Header http.Header
	Body   []byte
	// The parsed chat completion request.
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Stream      bool      `json:"stream"`
	Temperature *float64  `json:"temperature"`
	// ThinkingBudget is Gemini's, when the request set one.
	ThinkingBudget *int `json:"-"`
	// ReasoningEffort is OpenAI's, when the request set one.
	ReasoningEffort string `json:"reasoning_effort"`
	// Store is the responses API's store flag, when sent.
	Store *bool `json:"-"`
	// Cancelled is set when the client went away before the reply ended,
	// at CancelledAt.
	Cancelled   bool      `json:"-"`
	CancelledAt time.Time `json:"-"`
}

// AllText joins every message's text, for assertions that look for a phrase.
func (r Request) AllText() string {
	var b strings.Builder
	for _, m := range r.Messages {
		b.WriteString(m.Text())
		b.WriteString("\n")
	}
	return b.String()
}

// Server is the fake. The zero value is not usable; call Start or New.
type Server struct {
	srv *httptest.Server

	mu       sync.Mutex
	reply    func(Request) Reply
	requests []*Request
	conns    int // TCP connections accepted
}

// Start starts a fake that echoes a fixed reply until told otherwise.
func Start() *Server {
	s := &Server{reply: func(Request) Reply { return Reply{Content: "fake reply"} }}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	s.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	s.srv.Start()
	return s
}

// New starts a fake that stops when the test ends.
func New(tb testing.TB) *Server {
	s := Start()
	tb.Cleanup(s.Close)
	return s
}

// Close stops the server.
func (s *Server) Close() { s.srv.Close() }

// URL is the base URL a client is configured with, ending in /v1.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// RefusingURL is a base URL shaped as URL's whose connections are refused
// until tb ends (see package refused).
func RefusingURL(tb testing.TB) string { return "http://" + refused.Addr(tb) + "/v1" }

// SetReply decides the answer to every later request.
func (s *Server) SetReply(f func(Request) Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.reply = f
}

// Conns is how many TCP connections the server has accepted, so a test
// can tell a client that reuses its connections from one that dials for
// every request.
func (s *Server) Conns() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

// Requests returns copies of the requests received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	req := &Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	gemini := strings.Contains(r.URL.Path, "/models/") && strings.Contains(r.URL.Path, ":")
	responses := strings.HasSuffix(r.URL.Path, "/responses")
	switch {
	case gemini:
		parseGemini(req, r.URL.Path)
	case responses:
		parseResponses(req)
	default:
		_ = json.Unmarshal(body, req)
	}
	s.mu.Lock()
	s.requests = append(s.requests, req)
	reply := s.reply
	s.mu.Unlock()

	if r.Method != http.MethodPost || !gemini && !responses && !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		writeError(w, http.StatusNotFound, "not_found", "fakemodel serves POST .../chat/completions, .../responses and Gemini's models/{model}:generateContent")
		return
	}
	rep := reply(*req)
	cancelled := func() {
		s.mu.Lock()
		req.Cancelled, req.CancelledAt = true, time.Now()
		s.mu.Unlock()
	}
	if rep.Stall {
		<-r.Context().Done()
		cancelled()
		return
	}
	if rep.Delay > 0 {
		select {
		case <-time.After(rep.Delay):
		case <-r.Context().Done():
			cancelled()
			return
		}
	}
	switch {
	case gemini && rep.Raw == "":
		if !s.serveGemini(w, r, *req, rep) {
			cancelled()
		}
	case responses && rep.Raw == "" && (rep.Status == 0 || rep.Status == http.StatusOK):
		if !s.serveResponses(w, r, *req, rep) {
			cancelled()
		}
	case rep.Status != 0 && rep.Status != http.StatusOK:
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		if rep.Raw != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(rep.Status)
			_, _ = io.WriteString(w, rep.Raw)
			return
		}
		msg := rep.Message
		if msg == "" {
			msg = fmt.Sprintf("fake failure %d", rep.Status)
		}
		writeError(w, rep.Status, "server_error", msg)
	case rep.RefuseStream && req.Stream:
		msg := rep.Message
		if msg == "" {
			msg = "streaming is not supported by this server; send \"stream\": false"
		}
		writeError(w, http.StatusBadRequest, "invalid_request_error", msg)
	case len(rep.RawPieces) > 0:
		w.Header().Set("Content-Type", contentType(rep, "text/event-stream"))
		for _, piece := range rep.RawPieces {
			select {
			case <-r.Context().Done():
				cancelled()
				return
			case <-time.After(rep.PieceDelay):
			}
			_, _ = io.WriteString(w, piece)
			http.NewResponseController(w).Flush()
		}
	case rep.Raw != "":
		w.Header().Set("Content-Type", contentType(rep, "application/json"))
		_, _ = io.WriteString(w, rep.Raw)
	case req.Stream && !rep.IgnoreStream:
		if !s.stream(w, r, *req, rep) {
			cancelled()
		}
	default:
		w.Header().Set("Content-Type", contentType(rep, "application/json"))
		_ = json.NewEncoder(w).Encode(completion(*req, rep))
	}
}

// contentType is the Content-Type of a successful answer: the reply's own,
// or def.
func contentType(rep Reply, def string) string {
	if rep.ContentType != "" {
		return rep.ContentType
	}
	return def
}

func writeError(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": nil}})
}

func finish(rep Reply) string {
	if rep.FinishReason != "" {
		return rep.FinishReason
	}
	return "stop"
}

func usage(req Request, rep Reply) map[string]int {
	in, out := rep.PromptTokens, rep.CompletionTokens
	if in == 0 {
		in = len(req.AllText())/4 + 1
	}
	if out == 0 {
		out = len(rep.Content)/4 + 1
	}
	return map[string]int{"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out}
}

func completion(req Request, rep Reply) map[string]any {
	return map[string]any{
		"id": "chatcmpl-fake", "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{
			"index": 0, "finish_reason": finish(rep),
			"message": map[string]any{"role": "assistant", "content": rep.Content},
		}},
		"usage": usage(req, rep),
	}
}

// stream sends the reply as server-sent events; it reports false when the
// client went away first.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, req Request, rep Reply) bool {
	w.Header().Set("Content-Type", contentType(rep, "text/event-stream"))
	flusher, _ := w.(http.Flusher)
	send := func(v any) bool {
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	chunk := func(delta map[string]any, reason any) map[string]any {
		return map[string]any{
			"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": reason}},
		}
	}
	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return false
	}
	for i, piece := range splitKeep(rep.Content) {
		if rep.ResetAfter > 0 && i == rep.ResetAfter {
			drop(w)
			return true
		}
		if rep.StallAfter > 0 && i == rep.StallAfter {
			<-r.Context().Done()
			return false
		}
		if !send(chunk(map[string]any{"content": piece}, nil)) {
			return false
		}
	}
	if !send(chunk(map[string]any{}, finish(rep))) {
		return false
	}
	if !send(map[string]any{"id": "chatcmpl-fake", "object": "chat.completion.chunk", "model": req.Model, "choices": []any{}, "usage": usage(req, rep)}) {
		return false
	}
	_, err := io.WriteString(w, "data: [DONE]\n\n")
	return err == nil
}

// splitKeep splits after each space so the pieces join back to s.
func splitKeep(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// WaitCancelled blocks until request i (in arrival order) has been seen
// cancelled by its client, failing the test if it ends first.
func (s *Server) WaitCancelled(tb testing.TB, i int) {
	tb.Helper()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		done := i < len(s.requests) && s.requests[i].Cancelled
		s.mu.Unlock()
		if done {
			return
		}
		select {
		case <-deadline.C:
			tb.Fatalf("fakemodel: request %d was not cancelled within 10s", i)
		case <-tick.C:
		}
	}
}

// drop closes the connection under a response, as a crashing proxy would.
func drop(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
		}
	}
}
