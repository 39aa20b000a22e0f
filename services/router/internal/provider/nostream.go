package provider

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"regexp"

	openai "github.com/sashabaranov/go-openai"
)

// Some OpenAI-compatible servers cannot stream. zen asks each one to, and
// copes with the two ways such a server answers:
//
//   - It sends the whole completion as JSON anyway. A 200 whose Content-Type
//     is not text/event-stream and whose body opens with "{" is read as a
//     completion (an event stream opens with "data:", ":" or "event:").
//   - It refuses: a 400, 422 or 501 whose error names streaming (the word
//     "stream", as in "stream", "streaming" or "stream_options"). The call
//     is made again at once without streaming.
//
// Either way the client remembers the model (a Compat is one provider) and
// asks it without streaming from then on: at once for a JSON answer, and
// for a refusal once the call without streaming has worked. The memory
// lasts as long as the process. A body read whole is bound as an answer
// asked without streaming is, never by a stream's looser limits (see
// readWhole).

// streamTapKey holds, in a streaming call's context, the *streamTap the
// transport fills with the answer's body.
type streamTapKey struct{}

// streamTap is the body of an answer to a streaming request, taken from
// go-openai, which gets an empty body: a JSON completion when whole is
// set, else the events the reader in events.go reads. body is nil when
// there is nothing to read: a 3xx the HTTP client did not follow.
type streamTap struct {
	body  io.ReadCloser
	whole bool
}

// close closes the body the tap holds.
func (t *streamTap) close() {
	if t.body != nil {
		_ = t.body.Close()
	}
}

// streamTapTransport takes the answer to a streaming request away from
// the client library, and leaves it in the call's tap: every 2xx answer
// (the library reads 4xx and 5xx as errors), a 200 that holds a JSON
// completion apart. A 3xx stays with the library: the HTTP client follows
// it and must drain and close its body, and one it does not follow is no
// stream to read.
type streamTapTransport struct{ next http.RoundTripper }

func (t streamTapTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(r)
	tap, ok := r.Context().Value(streamTapKey{}).(*streamTap)
	if err != nil || !ok || resp.StatusCode/100 != 2 {
		return resp, err
	}
	body := resp.Body
	resp.Body = http.NoBody
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/event-stream" ||
		resp.StatusCode != http.StatusOK {
		tap.body = body
		return resp, nil
	}
	br := bufio.NewReader(body)
	peeked := struct {
		io.Reader
		io.Closer
	}{br, body}
	tap.body, tap.whole = peeked, opensObject(br)
	if tap.whole {
		readWhole(r.Context())
	}
	return resp, nil
}

// opensObject tells whether the body's first character past white space
// is "{", consuming only that white space.
func opensObject(br *bufio.Reader) bool {
	for {
		b, err := br.ReadByte()
		if err != nil {
			return false
		}
		switch b {
		case ' ', '\t', '\r', '\n':
			continue
		}
		_ = br.UnreadByte()
		return b == '{'
	}
}

// libraryClient returns hc as go-openai is given it: with the tap's
// transport on top, and the messages zen encoded put into its requests
// (messages.go).
func libraryClient(hc *http.Client) openai.HTTPDoer {
	out := *hc
	if out.Transport == nil {
		out.Transport = http.DefaultTransport
	}
	out.Transport = streamTapTransport{next: out.Transport}
	return messagesClient{next: &out}
}

// streamWord finds streaming named in an error: "stream", "streaming",
// "stream_options", but not "upstream".
var streamWord = regexp.MustCompile(`(?i)\bstream`)

// errStreamRefused is a server's refusal to stream.
var errStreamRefused = errors.New("the server does not stream")

// refusesStreaming tells a refusal to stream from the request's other
// faults.
func refusesStreaming(err error) bool {
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var status int
	var text string
	switch {
	case errors.As(err, &apiErr):
		status, text = apiErr.HTTPStatusCode, apiErr.Message
		if apiErr.Param != nil {
			text += " " + *apiErr.Param
		}
	case errors.As(err, &reqErr):
		status, text = reqErr.HTTPStatusCode, string(reqErr.Body)
	default:
		return false
	}
	switch status {
	case http.StatusBadRequest, http.StatusUnprocessableEntity, http.StatusNotImplemented:
		return streamWord.MatchString(text)
	}
	return false
}

// streams tells whether to ask the model to stream: not once its server
// has shown it does not.
func (c *Compat) streams(model string) bool {
	_, whole := c.unstreamed.Load(model)
	return !whole
}

// readCompletion reads a JSON completion that came back to a streaming
// request.
func (c *Compat) readCompletion(ctx context.Context, model string, body io.Reader,
	onDelta func(string)) (Result, error) {
	var out struct {
		openai.ChatCompletionResponse
		Error *openai.APIError `json:"error"`
	}
	if err := json.NewDecoder(body).Decode(&out); err != nil {
		return Result{}, c.wrap(ctx, model, err)
	}
	if out.Error != nil {
		return Result{}, &Error{Provider: c.label, Model: model,
			Msg: "the provider answered with an error: " + out.Error.Message}
	}
	return c.completed(model, out.ChatCompletionResponse, onDelta)
}

// completed is a whole completion as a Result, given to onDelta in one
// piece.
func (c *Compat) completed(model string, resp openai.ChatCompletionResponse, onDelta func(string)) (Result, error) {
	if len(resp.Choices) == 0 {
		return Result{}, &Error{Provider: c.label, Model: model, Msg: "the response had no choices"}
	}
	res := Result{Content: resp.Choices[0].Message.Content, FinishReason: string(resp.Choices[0].FinishReason),
		Usage: Usage{InputTokens: int64(resp.Usage.PromptTokens), OutputTokens: int64(resp.Usage.CompletionTokens)}}
	if onDelta != nil && res.Content != "" {
		onDelta(res.Content)
	}
	return res, nil
}
