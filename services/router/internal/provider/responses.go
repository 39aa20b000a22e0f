package provider

import (
	"context"
	"errors"
	"io"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// responsesRequest builds a /v1/responses request: the system prompt as
// instructions, messages as input items with text and image parts, and the
// reasoning effort (medium unless the model or the call says otherwise).
func (c *Compat) responsesRequest(req Request) openai.CreateResponseRequest {
	out := openai.CreateResponseRequest{Model: req.Model}
	var input []map[string]any
	for _, m := range req.Messages {
		if m.Role == "system" {
			out.Instructions = m.Content
			continue
		}
		kind := "input_text"
		if m.Role == "assistant" {
			kind = "output_text"
		}
		parts := []map[string]any{{"type": kind, "text": m.Content}}
		for _, img := range m.Images {
			parts = append(parts, map[string]any{"type": "input_image", "image_url": img})
		}
		input = append(input, map[string]any{"role": m.Role, "content": parts})
	}
	out.Input = input
	effort := req.ReasoningEffort
	if effort == "" {
		effort = "medium"
	}
	out.Reasoning = &openai.ResponseReasoning{Effort: effort}
	if !c.omitStore {
		store := true
		out.Store = &store
	}
	if req.MaxTokens > 0 {
		out.MaxOutputTokens = int(req.MaxTokens)
	}
	if req.Temperature != nil {
		t := float32(*req.Temperature)
		out.Temperature = &t
	}
	return out
}

// respond calls the responses API, streaming when asked.
func (c *Compat) respond(ctx context.Context, req Request, onDelta func(string)) (Result, error) {
	body := c.responsesRequest(req)
	if !req.Stream {
		resp, err := c.client.CreateResponse(ctx, body)
		if err != nil {
			return Result{}, c.wrap(ctx, req.Model, err)
		}
		res := responseResult(&resp)
		if onDelta != nil && res.Content != "" {
			onDelta(res.Content)
		}
		return res, nil
	}
	stream, err := c.client.CreateResponseStream(ctx, body)
	if err != nil {
		return Result{}, c.wrap(ctx, req.Model, err)
	}
	defer stream.Close()
	var text strings.Builder
	var res Result
	events, ended := 0, false
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Result{}, c.wrap(ctx, req.Model, err)
		}
		events++
		switch ev.Type {
		case openai.ResponseStreamEventOutputTextDelta:
			if err := textFits(ctx, text.Len()+len(ev.Delta)); err != nil {
				return Result{}, err
			}
			text.WriteString(ev.Delta)
			if onDelta != nil {
				onDelta(ev.Delta)
			}
		case openai.ResponseStreamEventCompleted, openai.ResponseStreamEventIncomplete:
			ended = true
			if ev.Response != nil {
				final := responseResult(ev.Response)
				res.FinishReason, res.Usage = final.FinishReason, final.Usage
			}
		case openai.ResponseStreamEventFailed:
			msg := "the response failed"
			if ev.Response != nil && ev.Response.Error != nil {
				msg += ": " + ev.Response.Error.Message
			}
			return Result{}, &Error{Provider: c.label, Model: req.Model, Msg: msg}
		}
	}
	if events == 0 {
		return Result{}, &Error{Provider: c.label, Model: req.Model, Msg: "the provider's response could not be read: it was not a responses API stream"}
	}
	if !ended { // the provider ends it with its completed or incomplete event
		return Result{}, &Error{Provider: c.label, Model: req.Model, Retryable: true, Msg: streamCut}
	}
	res.Content = text.String()
	return res, nil
}

// responseResult reads a finished response: its text, why it stopped, and
// what it cost.
func responseResult(r *openai.CreateResponseResponse) Result {
	res := Result{Content: r.OutputText, FinishReason: string(r.Status)}
	if r.IncompleteDetails != nil && r.IncompleteDetails.Reason != "" {
		res.FinishReason = r.IncompleteDetails.Reason
	}
	if r.Status == "completed" {
		res.FinishReason = "stop"
	}
	if r.Usage != nil {
		res.Usage = Usage{InputTokens: int64(r.Usage.InputTokens), OutputTokens: int64(r.Usage.OutputTokens)}
	}
	if res.Content == "" {
		res.Content = outputText(r.Output)
	}
	return res
}

// outputText collects output_text parts from a response's output items,
// for servers that leave the output_text convenience field out.
func outputText(items []any) string {
	var b strings.Builder
	for _, item := range items {
		m, _ := item.(map[string]any)
		content, _ := m["content"].([]any)
		for _, part := range content {
			p, _ := part.(map[string]any)
			if p["type"] == "output_text" {
				s, _ := p["text"].(string)
				b.WriteString(s)
			}
		}
	}
	return b.String()
}
