package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// parseResponses fills a Request from a /v1/responses body: instructions
// become a system message and each input item a message.
func parseResponses(req *Request) {
	var body struct {
		Model        string `json:"model"`
		Stream       bool   `json:"stream"`
		Instructions string `json:"instructions"`
		Input        []struct {
			Role    string `json:"role"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"input"`
		Reasoning *struct {
			Effort string `json:"effort"`
		} `json:"reasoning"`
		Store *bool `json:"store"`
	}
	_ = json.Unmarshal(req.Body, &body)
	req.Model, req.Stream, req.Store = body.Model, body.Stream, body.Store
	if body.Reasoning != nil {
		req.ReasoningEffort = body.Reasoning.Effort
	}
	if body.Instructions != "" {
		b, _ := json.Marshal(body.Instructions)
		req.Messages = append(req.Messages, Message{Role: "system", Content: b})
	}
	for _, in := range body.Input {
		var text string
		for _, c := range in.Content {
			text += c.Text
		}
		b, _ := json.Marshal(text)
		req.Messages = append(req.Messages, Message{Role: in.Role, Content: b})
	}
}

func responseObject(req Request, rep Reply) map[string]any {
	return map[string]any{
		"id": "resp_fake", "object": "response", "created_at": time.Now().Unix(), "model": req.Model, "status": "completed",
		"output": []any{map[string]any{"type": "message", "role": "assistant",
			"content": []any{map[string]any{"type": "output_text", "text": rep.Content}}}},
		"usage": map[string]any{"input_tokens": max(rep.PromptTokens, 1), "output_tokens": max(rep.CompletionTokens, 1), "total_tokens": 2},
	}
}

// serveResponses answers like OpenAI's responses API.
func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request, req Request, rep Reply) bool {
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(responseObject(req, rep))
		return true
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	seq := 0
	send := func(v map[string]any) bool {
		seq++
		v["sequence_number"] = seq
		b, _ := json.Marshal(v)
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", v["type"], b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return r.Context().Err() == nil
	}
	if !send(map[string]any{"type": "response.created", "response": map[string]any{"id": "resp_fake", "status": "in_progress"}}) {
		return false
	}
	for i, piece := range splitKeep(rep.Content) {
		if rep.ResetAfter > 0 && i == rep.ResetAfter {
			drop(w)
			return true
		}
		if !send(map[string]any{"type": "response.output_text.delta", "item_id": "msg_fake", "delta": piece}) {
			return false
		}
	}
	final := responseObject(req, rep)
	kind := "response.completed"
	if rep.FinishReason != "" && rep.FinishReason != "stop" {
		// An unfinished response: the reason is OpenAI's (content_filter,
		// max_output_tokens).
		kind, final["status"] = "response.incomplete", "incomplete"
		final["incomplete_details"] = map[string]any{"reason": rep.FinishReason}
	}
	return send(map[string]any{"type": kind, "response": final})
}
