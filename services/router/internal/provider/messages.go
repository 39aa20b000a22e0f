package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	openai "github.com/sashabaranov/go-openai"
)

// zen encodes a chat request's messages itself: go-openai encodes each
// message through reflection twice over (its MarshalJSON marshals a copy
// of the message, which the request's encoder then checks and copies
// again), which at 50 turns of history was most of what building a
// request cost. go-openai still builds and sends the request, with the
// messages left out ("messages":null); the client go-openai is given puts
// them in (withMessages, messagesClient). The bytes on the wire are
// go-openai's own: FuzzEncodeMessages and TestRequestBodiesAreGoOpenAIs
// compare them, for the go-openai TestGoOpenAIVersion names.

// messagesKey holds, in a call's context, the messages go-openai's request
// leaves out.
type messagesKey struct{}

// heldMessages are a request's messages, encoded at buf[at:], with room
// before them for the head of the body go-openai builds (the model's name
// comes first) and after them for its tail, so that the body is made in
// place: the messages are most of it.
type heldMessages struct {
	buf []byte
	at  int
	// spliced is set once a body was made in buf: a second body (a
	// request sent again with the same context, even at once) is made in
	// a copy, so it cannot overwrite the first while the transport may
	// still read it.
	spliced atomic.Bool
}

// headRoom and tailRoom are the room heldMessages leave around the
// messages; a body whose head or tail is longer is made in a copy.
const (
	headRoom = 128
	tailRoom = 1024
)

func (h *heldMessages) encoded() []byte { return h.buf[h.at:] }

// withMessages returns req for go-openai, without its messages, and ctx
// holding them for the transport.
func withMessages(ctx context.Context, req openai.ChatCompletionRequest) (context.Context,
	openai.ChatCompletionRequest) {
	if req.Messages == nil {
		return ctx, req // go-openai writes null, where appendMessages would write []
	}
	buf, err := appendMessages(make([]byte, headRoom, headRoom+encodedSize(req.Messages)+tailRoom), req.Messages)
	if err != nil {
		return ctx, req // go-openai's encoder will say what is wrong
	}
	held := &heldMessages{buf: buf, at: headRoom}
	req.Messages = nil
	return context.WithValue(ctx, messagesKey{}, held), req
}

// encodedSize is about how long messages are encoded, with room for some
// escapes.
func encodedSize(messages []openai.ChatCompletionMessage) int {
	size := 2
	for _, m := range messages {
		size += len(m.Role) + len(m.Content) + len(`{"role":"","content":""},`) + len(m.Content)/8
		for _, p := range m.MultiContent {
			size += len(p.Text) + len(p.Text)/8 + 64
			if p.ImageURL != nil {
				size += len(p.ImageURL.URL) + 32
			}
		}
	}
	return size
}

// appendMessages appends messages to dst encoded as go-openai encodes
// them: a message of text alone by hand, its text quoted straight into
// dst (appendQuoted), any other by its own MarshalJSON, through an encoder
// that writes into dst, so that an image's data is copied once.
func appendMessages(dst []byte, messages []openai.ChatCompletionMessage) ([]byte, error) {
	dst = append(dst, '[')
	for i, m := range messages {
		if i > 0 {
			dst = append(dst, ',')
		}
		if !plainMessage(m) {
			// What json.Marshal writes, strings HTML-escaped, as
			// go-openai's encoder does, and a newline, dropped.
			if err := json.NewEncoder(appender{&dst}).Encode(m); err != nil {
				return nil, err
			}
			dst = dst[:len(dst)-1]
			continue
		}
		dst = appendQuoted(append(dst, `{"role":`...), m.Role)
		if m.Content != "" {
			dst = appendQuoted(append(dst, `,"content":`...), m.Content)
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// appender is an io.Writer that appends to a slice.
type appender struct{ b *[]byte }

func (a appender) Write(p []byte) (int, error) {
	*a.b = append(*a.b, p...)
	return len(p), nil
}

// plainMessage tells a message that holds a role and text and nothing
// else, as Compat.request builds one without images.
func plainMessage(m openai.ChatCompletionMessage) bool {
	return m.MultiContent == nil && m.Refusal == "" && m.Name == "" && m.ReasoningContent == "" &&
		m.FunctionCall == nil && m.ToolCalls == nil && m.ToolCallID == ""
}

// placeholder is where go-openai's body holds the messages it was not
// given: once, since no JSON string holds a bare quote.
var placeholder = []byte(`"messages":null`)

// spliceMessages is body with the held messages in place of the
// placeholder, or false when body does not hold it exactly once. The
// first body is made in held's buffer, which it then shares, when the
// rest of body fits around the messages.
func spliceMessages(body []byte, held *heldMessages) ([]byte, bool) {
	i := bytes.Index(body, placeholder)
	if i < 0 || bytes.Contains(body[i+len(placeholder):], placeholder) {
		return nil, false
	}
	head, tail := body[:i+len(`"messages":`)], body[i+len(placeholder):]
	if len(head) <= held.at && len(tail) <= cap(held.buf)-len(held.buf) && held.spliced.CompareAndSwap(false, true) {
		start := held.at - len(head)
		copy(held.buf[start:], head)
		return append(held.buf[start:], tail...), true
	}
	encoded := held.encoded()
	out := make([]byte, 0, len(head)+len(encoded)+len(tail))
	return append(append(append(out, head...), encoded...), tail...), true
}

// messagesClient is the client go-openai sends its requests with: it puts
// a chat completion's held messages into the body go-openai built, once,
// before the HTTP client sends it (so redirects and retries resend the
// whole body). A body without the placeholder is an error, not a guess:
// go-openai no longer builds the body this was written for.
type messagesClient struct{ next *http.Client }

func (c messagesClient) Do(r *http.Request) (*http.Response, error) {
	held, ok := r.Context().Value(messagesKey{}).(*heldMessages)
	if !ok || r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/chat/completions") || r.Body == nil {
		return c.next.Do(r)
	}
	built, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	body, ok := spliceMessages(built, held)
	if !ok {
		return nil, errors.New("zen could not put the messages into the request go-openai built " +
			"(no \"messages\":null in it): a go-openai upgrade needs messages.go checked again")
	}
	out := r.Clone(r.Context())
	out.ContentLength = int64(len(body))
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return c.next.Do(out)
}
