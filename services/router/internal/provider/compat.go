package provider

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
)

// Compat is a client for an OpenAI-compatible chat completions endpoint.
type Compat struct {
	label     string // "OpenAI", "Custom API": how errors name the provider
	key       string // only to keep it out of error text
	client    *openai.Client
	omitStore bool // OpenRouter refuses "store" on /responses
}

// NewHTTPClient returns the traced HTTP client provider calls use. There is
// no overall timeout: streams are bounded by the caller's context.
func NewHTTPClient(connectTimeout time.Duration) *http.Client {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.Proxy = nil
	transport.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
	return &http.Client{Transport: otelhttp.NewTransport(retryAfterTransport{replyCapTransport{transport}},
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			return "provider " + r.Method + " " + r.URL.Path
		}))}
}

// NewCompat returns a client for baseURL (ending in /v1 for most servers).
func NewCompat(label, baseURL, apiKey string, hc *http.Client) *Compat {
	cfg := openai.DefaultConfig(apiKey)
	cfg.BaseURL = strings.TrimRight(baseURL, "/")
	cfg.HTTPClient = hc
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

// Generate calls the endpoint, streaming when req.Stream is set.
func (c *Compat) Generate(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	return tidy(ctx, c.key, func(ctx context.Context) (Result, error) {
		return capReply(ctx, c.label, req, func(ctx context.Context) (Result, error) {
			return c.generate(ctx, req, onDelta)
		})
	})
}

func (c *Compat) generate(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	if req.Responses {
		return c.respond(ctx, req, onDelta)
	}
	if !req.Stream {
		resp, err := c.client.CreateChatCompletion(ctx, c.request(req))
		if err != nil {
			return Result{}, c.wrap(ctx, req.Model, err)
		}
		if len(resp.Choices) == 0 {
			return Result{}, &Error{Provider: c.label, Model: req.Model, Msg: "the response had no choices"}
		}
		res := Result{Content: resp.Choices[0].Message.Content, FinishReason: string(resp.Choices[0].FinishReason),
			Usage: Usage{InputTokens: int64(resp.Usage.PromptTokens), OutputTokens: int64(resp.Usage.CompletionTokens)}}
		if onDelta != nil && res.Content != "" {
			onDelta(res.Content)
		}
		return res, nil
	}
	stream, err := c.client.CreateChatCompletionStream(ctx, c.request(req))
	if err != nil {
		return Result{}, c.wrap(ctx, req.Model, err)
	}
	defer stream.Close()
	var res Result
	var text strings.Builder
	chunks := 0
	for {
		chunk, err := stream.Recv()
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
				res.FinishReason = string(choice.FinishReason)
			}
		}
	}
	if chunks == 0 {
		// A body with no server-sent events at all is not a stream that
		// ended early: the endpoint does not speak this protocol.
		return Result{}, &Error{Provider: c.label, Model: req.Model, Msg: "the provider's response could not be read: it was not a chat completion stream"}
	}
	res.Content = text.String()
	return res, nil
}

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
		e.Fault = statusFault(e.Status)
		if e.Status == http.StatusTooManyRequests && !retryable429(apiErr) {
			return e // quota or request size: waiting will not help
		}
	case errors.As(err, &reqErr):
		e.Status = reqErr.HTTPStatusCode
		e.Msg = fmt.Sprintf("HTTP %d: %s", reqErr.HTTPStatusCode, http.StatusText(reqErr.HTTPStatusCode))
		e.Fault = statusFault(e.Status)
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
	cfg.HTTPClient = hc
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
