package provider

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	openai "github.com/sashabaranov/go-openai"
)

// zen encodes a chat request's messages itself: go-openai encodes each
// message through reflection twice over (its MarshalJSON marshals a copy
// of the message, which the request's encoder then checks and copies
// again), which at 50 turns of history was most of what building a
// request cost. go-openai still builds and sends the request, with the
// messages left out ("messages":null); the transport puts them in
// (withMessages, messagesTransport). The bytes on the wire are go-openai's
// own: TestRequestBodiesAreGoOpenAIs compares them.

// messagesKey holds, in a call's context, the messages go-openai's request
// leaves out.
type messagesKey struct{}

// heldMessages are a request's messages, encoded, and the request as
// go-openai would encode it whole, for a body they cannot be put into.
type heldMessages struct {
	encoded []byte
	whole   openai.ChatCompletionRequest
}

// withMessages returns req for go-openai, without its messages, and ctx
// holding them for the transport.
func withMessages(ctx context.Context, req openai.ChatCompletionRequest) (context.Context,
	openai.ChatCompletionRequest) {
	encoded, err := encodeMessages(req.Messages)
	if err != nil {
		return ctx, req // go-openai's encoder will say what is wrong
	}
	held := &heldMessages{encoded: encoded, whole: req}
	req.Messages = nil
	return context.WithValue(ctx, messagesKey{}, held), req
}

// encodeMessages encodes messages as go-openai does: a message of text
// alone by hand, any other by its own MarshalJSON.
func encodeMessages(messages []openai.ChatCompletionMessage) ([]byte, error) {
	b := []byte{'['}
	for i, m := range messages {
		if i > 0 {
			b = append(b, ',')
		}
		if !plainMessage(m) {
			enc, err := json.Marshal(m)
			if err != nil {
				return nil, err
			}
			b = append(b, enc...)
			continue
		}
		role, err := json.Marshal(m.Role) // escapes HTML, as go-openai's encoder does
		if err != nil {
			return nil, err
		}
		b = append(append(b, `{"role":`...), role...)
		if m.Content != "" {
			content, err := json.Marshal(m.Content)
			if err != nil {
				return nil, err
			}
			b = append(append(b, `,"content":`...), content...)
		}
		b = append(b, '}')
	}
	return append(b, ']'), nil
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

// spliceMessages is body with the messages in place of the placeholder,
// or false when body does not hold it exactly once.
func spliceMessages(body, encoded []byte) ([]byte, bool) {
	i := bytes.Index(body, placeholder)
	if i < 0 || bytes.Contains(body[i+len(placeholder):], placeholder) {
		return nil, false
	}
	head := i + len(`"messages":`)
	out := make([]byte, 0, len(body)-len("null")+len(encoded))
	out = append(append(out, body[:head]...), encoded...)
	return append(out, body[i+len(placeholder):]...), true
}

// messagesTransport puts a request's held messages into the body
// go-openai built; should that body not hold their placeholder, it sends
// the whole request as go-openai would have encoded it.
type messagesTransport struct{ next http.RoundTripper }

func (t messagesTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	held, ok := r.Context().Value(messagesKey{}).(*heldMessages)
	if !ok || r.Body == nil || r.GetBody == nil {
		return t.next.RoundTrip(r)
	}
	built, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	body, ok := spliceMessages(built, held.encoded)
	if !ok {
		if body, err = json.Marshal(held.whole); err != nil {
			return nil, err
		}
	}
	out := r.Clone(r.Context())
	out.ContentLength = int64(len(body))
	out.Body = io.NopCloser(bytes.NewReader(body))
	out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.next.RoundTrip(out)
}
