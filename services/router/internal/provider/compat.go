package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"

	openai "github.com/sashabaranov/go-openai"
)

// Compat is a client for an OpenAI-compatible chat completions endpoint.
type Compat struct {
	label     string // "OpenAI", "Custom API": how errors name the provider
	key       string // only to keep it out of error text
	client    *openai.Client
	omitStore bool // OpenRouter refuses "store" on /responses
	// unstreamed holds the models whose server answers them whole: they
	// are asked without streaming (see nostream.go).
	unstreamed sync.Map
}

// NewCompat returns a client for baseURL (ending in /v1 for most servers).
func NewCompat(label, baseURL, apiKey string, hc *http.Client) *Compat {
	cfg := openai.DefaultConfig(apiKey)
	cfg.BaseURL = strings.TrimRight(baseURL, "/")
	cfg.HTTPClient = libraryClient(hc)
	return &Compat{label: label, key: apiKey, client: openai.NewClientWithConfig(cfg)}
}

func (c *Compat) request(req Request) openai.ChatCompletionRequest {
	out := openai.ChatCompletionRequest{Model: req.Model, Stream: req.Stream}
	for _, m := range req.Messages {
		msg := openai.ChatCompletionMessage{Role: m.Role}
		if len(m.Images) == 0 {
			msg.Content = m.Content
		} else {
			msg.MultiContent = []openai.ChatMessagePart{{Type: openai.ChatMessagePartTypeText, Text: m.Content}}
			for _, img := range m.Images {
				msg.MultiContent = append(msg.MultiContent, openai.ChatMessagePart{
					Type: openai.ChatMessagePartTypeImageURL, ImageURL: &openai.ChatMessageImageURL{URL: img},
				})
			}
		}
		out.Messages = append(out.Messages, msg)
	}
	if req.Temperature != nil {
		out.Temperature = float32(*req.Temperature)
		if out.Temperature == 0 {
			// go-openai drops a zero temperature; a tiny one keeps the intent.
			out.Temperature = 1e-6
		}
	}
	if req.MaxTokens > 0 {
		out.MaxCompletionTokens = int(req.MaxTokens)
	}
	out.ReasoningEffort = req.ReasoningEffort
	if req.Stream {
		out.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	return out
}

// Generate calls the endpoint, streaming when req.Stream is set and the
// model's server has not shown it answers whole.
func (c *Compat) Generate(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	req.Stream = req.Stream && c.streams(req.Model)
	return tidy(ctx, c.key, func(ctx context.Context) (Result, error) {
		return capReply(ctx, c.label, req, func(ctx context.Context) (Result, error) {
			return c.generate(ctx, req, onDelta)
		})
	})
}

func (c *Compat) generate(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	switch {
	case req.Responses:
		return c.respond(ctx, req, onDelta)
	case !req.Stream:
		return c.complete(ctx, req, onDelta)
	}
	res, err := c.stream(ctx, req, onDelta)
	if errors.Is(err, errStreamRefused) {
		req.Stream = false
		readWhole(ctx)
		if res, err = c.complete(ctx, req, onDelta); err == nil {
			c.unstreamed.Store(req.Model, true)
		}
	}
	return res, err
}

// complete asks for the whole reply at once.
func (c *Compat) complete(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	resp, err := c.client.CreateChatCompletion(withMessages(ctx, c.request(req)))
	if err != nil {
		return Result{}, c.wrap(ctx, req.Model, err)
	}
	return c.completed(req.Model, resp, onDelta)
}

// stream asks for the reply as a stream of events, and reads a whole
// completion when that is what comes back. go-openai sends the request and
// reads a failure; the tap hands the body of any other answer to zen's own
// reader (events.go).
func (c *Compat) stream(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	tap := &streamTap{}
	defer tap.close()
	stream, err := c.client.CreateChatCompletionStream(withMessages(context.WithValue(ctx, streamTapKey{}, tap),
		c.request(req)))
	if err != nil {
		if ctx.Err() == nil && refusesStreaming(err) {
			return Result{}, errStreamRefused
		}
		return Result{}, c.wrap(ctx, req.Model, err)
	}
	_ = stream.Close() // its body is empty: the tap holds the answer
	if tap.whole {
		c.unstreamed.Store(req.Model, true)
		return c.readCompletion(ctx, req.Model, tap.body, onDelta)
	}
	body := tap.body
	if body == nil { // a 3xx the HTTP client did not follow: no stream to read
		body = http.NoBody
	}
	events := newEventReader(body, emptyMessagesLimit)
	defer events.release()
	var res Result
	var text strings.Builder
	var chunk streamChunk
	chunks := 0
	for {
		err := events.next(&chunk)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, c.wrap(ctx, req.Model, err)
		}
		chunks++
		if chunk.Usage != nil {
			res.Usage = Usage{InputTokens: int64(chunk.Usage.PromptTokens), OutputTokens: int64(chunk.Usage.CompletionTokens)}
		}
		for _, choice := range chunk.Choices {
			if choice.Delta.Content != "" {
				if err := textFits(ctx, text.Len()+len(choice.Delta.Content)); err != nil {
					return Result{}, err
				}
				text.WriteString(choice.Delta.Content)
				if onDelta != nil {
					onDelta(choice.Delta.Content)
				}
			}
			if choice.FinishReason != "" {
				res.FinishReason = choice.FinishReason
			}
		}
	}
	if chunks == 0 {
		// A body with no server-sent events at all is not a stream that
		// ended early: the endpoint does not speak this protocol.
		return Result{}, &Error{Provider: c.label, Model: req.Model, Msg: "the provider's response could not be read: it was not a chat completion stream"}
	}
	if !events.done && res.FinishReason == "" {
		// Its end is a choice's finish reason or [DONE]: a body that ends
		// before either was cut (a proxy's timeout, a crash between chunks).
		return Result{}, &Error{Provider: c.label, Model: req.Model, Retryable: true, Msg: streamCut}
	}
	res.Content = text.String()
	return res, nil
}

// streamCut says a stream ended before the provider ended it, and what to
// do about a provider that never ends its streams.
const streamCut = "the stream ended before the reply was complete (a provider that never ends its streams with " +
	"a finish reason or [DONE] can be asked without one: set \"supports_streaming\": false for the model in its " +
	"models file)"

// wrap turns a client error into an Error a person can act on.
func (c *Compat) wrap(ctx context.Context, model string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	e := &Error{Provider: c.label, Model: model}
	var apiErr *openai.APIError
	var reqErr *openai.RequestError
	var netErr net.Error
	switch {
	case errors.As(err, &apiErr):
		e.Status = apiErr.HTTPStatusCode
		e.Msg = fmt.Sprintf("HTTP %d: %s", apiErr.HTTPStatusCode, apiErr.Message)
		if e.Status == 0 { // an error event in a stream that began well
			e.Msg = "the provider reported an error in the middle of the reply: " + apiErr.Message
		}
		e.Fault = statusFault(e.Status, apiErr.Message, model)
		if e.Status == http.StatusTooManyRequests && !retryable429(apiErr) {
			return e // quota or request size: waiting will not help
		}
	case errors.As(err, &reqErr):
		e.Status = reqErr.HTTPStatusCode
		e.Msg = fmt.Sprintf("HTTP %d: %s", reqErr.HTTPStatusCode, http.StatusText(reqErr.HTTPStatusCode))
		e.Fault = statusFault(e.Status, "", model)
	case errors.As(err, &netErr):
		e.Msg, e.Retryable, e.Fault = "could not reach the provider: "+netErr.Error(), true, transportFault(err)
		return e
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		e.Msg, e.Retryable = "the connection dropped in the middle of the reply", true
		return e
	default:
		e.Msg = "the provider's response could not be read: " + err.Error()
		return e
	}
	e.Retryable = retryableStatus(e.Status)
	return e
}

// redact removes a key from text a provider or a library produced, which
// may echo it back (for example in "invalid API key" messages).
func redact(text, key string) string {
	if len(key) < 8 {
		return text
	}
	return strings.ReplaceAll(text, key, "[REDACTED]")
}

// retryable429 tells a rate limit, which passes, from an exhausted quota or
// an oversized request, which do not.
func retryable429(e *openai.APIError) bool {
	code := fmt.Sprint(e.Code)
	switch {
	case e.Type == "tokens", e.Type == "insufficient_quota", code == "insufficient_quota",
		code == "invalid_request_error", code == "context_length_exceeded":
		return false
	}
	return true
}

// CompatOptions tune an OpenAI-compatible client for a particular service.
type CompatOptions struct {
	// Headers are sent with every request (OpenRouter's referer and title).
	Headers map[string]string
	// OmitStore leaves "store" out of responses API requests.
	OmitStore bool
	// Deployment, when set, makes an Azure-style client: requests go to
	// {base}/openai/deployments/{Deployment(model)}/chat/completions with an
	// api-key header and APIVersion, as Azure OpenAI and DIAL expect.
	Deployment func(model string) string
	APIVersion string
}

// NewCompatWith is NewCompat with options.
func NewCompatWith(label, baseURL, apiKey string, hc *http.Client, o CompatOptions) *Compat {
	if len(o.Headers) > 0 {
		hc = &http.Client{Transport: headerTransport{next: hc.Transport, headers: o.Headers}, Timeout: hc.Timeout}
	}
	if o.Deployment == nil {
		c := NewCompat(label, baseURL, apiKey, hc)
		c.omitStore = o.OmitStore
		return c
	}
	cfg := openai.DefaultAzureConfig(apiKey, strings.TrimRight(baseURL, "/"))
	cfg.APIVersion = o.APIVersion
	cfg.AzureModelMapperFunc = o.Deployment
	cfg.HTTPClient = libraryClient(hc)
	return &Compat{label: label, key: apiKey, client: openai.NewClientWithConfig(cfg)}
}

type headerTransport struct {
	next    http.RoundTripper
	headers map[string]string
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range t.headers {
		r.Header.Set(k, v)
	}
	return t.next.RoundTrip(r)
}
