package provider

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"

	"google.golang.org/genai"
)

// Gemini calls the Gemini API through Google's genai SDK.
type Gemini struct {
	key    string
	client *genai.Client
}

// NewGemini returns a client; baseURL may be empty for Google's endpoint.
func NewGemini(ctx context.Context, baseURL, apiKey string, hc *http.Client) (*Gemini, error) {
	c, err := genai.NewClient(ctx, &genai.ClientConfig{
		APIKey: apiKey, Backend: genai.BackendGeminiAPI, HTTPClient: hc, HTTPOptions: genai.HTTPOptions{BaseURL: baseURL},
	})
	if err != nil {
		return nil, fmt.Errorf("gemini client: %w", err)
	}
	return &Gemini{key: apiKey, client: c}, nil
}

const geminiLabel = "Gemini"

// Generate sends the system prompt as Gemini's own system instruction and
// images as inline parts.
func (g *Gemini) Generate(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	return tidy(ctx, g.key, func(ctx context.Context) (Result, error) {
		return capReply(ctx, geminiLabel, req, func(ctx context.Context) (Result, error) {
			return g.generate(ctx, req, onDelta)
		})
	})
}

func (g *Gemini) generate(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	cfg := &genai.GenerateContentConfig{}
	var contents []*genai.Content
	for _, m := range req.Messages {
		if m.Role == "system" {
			cfg.SystemInstruction = &genai.Content{Parts: []*genai.Part{{Text: m.Content}}}
			continue
		}
		role := genai.RoleUser
		if m.Role == "assistant" {
			role = genai.RoleModel
		}
		parts := []*genai.Part{{Text: m.Content}}
		for _, img := range m.Images {
			part, err := inlineImage(img)
			if err != nil {
				return Result{}, &Error{Provider: geminiLabel, Model: req.Model, Fault: FaultRequest, Msg: err.Error()}
			}
			parts = append(parts, part)
		}
		contents = append(contents, &genai.Content{Role: role, Parts: parts})
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		cfg.Temperature = &t
	}
	if req.MaxTokens > 0 {
		cfg.MaxOutputTokens = int32(req.MaxTokens)
	}
	if req.ThinkingBudget != nil {
		cfg.ThinkingConfig = &genai.ThinkingConfig{ThinkingBudget: req.ThinkingBudget}
	}
	var res Result
	var text strings.Builder
	take := func(resp *genai.GenerateContentResponse) error {
		if fb := resp.PromptFeedback; fb != nil && fb.BlockReason != "" {
			return &Error{Provider: geminiLabel, Model: req.Model, Fault: FaultRequest,
				Msg: fmt.Sprintf("Your request was blocked by the content safety policy (%s). Rephrase it and try again.", fb.BlockReason)}
		}
		if len(resp.Candidates) > 0 && resp.Candidates[0].FinishReason != "" {
			res.FinishReason = string(resp.Candidates[0].FinishReason)
		}
		if u := resp.UsageMetadata; u != nil {
			res.Usage = Usage{InputTokens: int64(u.PromptTokenCount), OutputTokens: int64(u.CandidatesTokenCount + u.ThoughtsTokenCount)}
		}
		if delta := answerText(resp); delta != "" {
			if err := textFits(ctx, text.Len()+len(delta)); err != nil {
				return err
			}
			text.WriteString(delta)
			if onDelta != nil {
				onDelta(delta)
			}
		}
		return nil
	}
	if !req.Stream {
		resp, err := g.client.Models.GenerateContent(ctx, req.Model, contents, cfg)
		if err != nil {
			return Result{}, wrapGemini(ctx, req.Model, err)
		}
		if err := take(resp); err != nil {
			return Result{}, err
		}
	} else {
		for resp, err := range g.client.Models.GenerateContentStream(ctx, req.Model, contents, cfg) {
			if err != nil {
				return Result{}, wrapGemini(ctx, req.Model, err)
			}
			if err := take(resp); err != nil {
				return Result{}, err
			}
		}
		if res.FinishReason == "" { // a candidate, the last, says why it finished
			return Result{}, &Error{Provider: geminiLabel, Model: req.Model, Retryable: true, Msg: streamCut}
		}
	}
	res.Content = text.String()
	return res, nil
}

// answerText joins the text parts of the first candidate, leaving out the
// model's thoughts.
func answerText(resp *genai.GenerateContentResponse) string {
	if len(resp.Candidates) == 0 || resp.Candidates[0].Content == nil {
		return ""
	}
	var b strings.Builder
	for _, p := range resp.Candidates[0].Content.Parts {
		if p != nil && !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// inlineImage turns a data URL into an inline part.
func inlineImage(dataURL string) (*genai.Part, error) {
	meta, data, ok := strings.Cut(strings.TrimPrefix(dataURL, "data:"), ",")
	mime, enc, _ := strings.Cut(meta, ";")
	if !ok || enc != "base64" {
		return nil, errors.New("an image is not a base64 data URL")
	}
	raw, err := base64.StdEncoding.DecodeString(data)
	if err != nil {
		// Unpadded, as some clients send it: the edge lets it through.
		if raw, err = base64.RawStdEncoding.DecodeString(data); err != nil {
			return nil, fmt.Errorf("an image's base64 data is broken: %w", err)
		}
	}
	return genai.NewPartFromBytes(raw, mime), nil
}

func wrapGemini(ctx context.Context, model string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	e := &Error{Provider: geminiLabel, Model: model}
	var apiErr genai.APIError
	var netErr net.Error
	switch {
	case errors.As(err, &apiErr):
		e.Status = apiErr.Code
		e.Msg = fmt.Sprintf("HTTP %d: %s", apiErr.Code, strings.TrimSpace(apiErr.Message))
		e.Retryable, e.Fault = retryableStatus(apiErr.Code), statusFault(apiErr.Code, apiErr.Message, model)
	case errors.As(err, &netErr):
		e.Msg, e.Retryable, e.Fault = "could not reach the provider: "+netErr.Error(), true, transportFault(err)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE):
		e.Msg, e.Retryable = "the connection dropped in the middle of the reply", true
	default:
		e.Msg = "the provider's response could not be read: " + err.Error()
	}
	return e
}

// retryableStatus lists the HTTP statuses worth another try.
func retryableStatus(code int) bool {
	switch code {
	case http.StatusRequestTimeout, http.StatusTooManyRequests, http.StatusInternalServerError,
		http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}
