package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// geminiRequest is the part of a generateContent body the fake reads.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			Text       string          `json:"text"`
			InlineData json.RawMessage `json:"inlineData"`
		} `json:"parts"`
	} `json:"contents"`
	SystemInstruction *struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"systemInstruction"`
	GenerationConfig struct {
		Temperature    *float64 `json:"temperature"`
		ThinkingConfig *struct {
			ThinkingBudget *int `json:"thinkingBudget"`
		} `json:"thinkingConfig"`
	} `json:"generationConfig"`
}

// GeminiURL is the base URL a Gemini client is configured with.
func (s *Server) GeminiURL() string { return s.srv.URL }

// parseGemini fills a Request from a Gemini call at
// /v1beta/models/{model}:{method}.
func parseGemini(req *Request, path string) (stream bool) {
	name := path[strings.LastIndex(path, "/models/")+len("/models/"):]
	model, method, _ := strings.Cut(name, ":")
	req.Model, req.Stream = model, method == "streamGenerateContent"
	var g geminiRequest
	_ = json.Unmarshal(req.Body, &g)
	if g.SystemInstruction != nil && len(g.SystemInstruction.Parts) > 0 {
		b, _ := json.Marshal(g.SystemInstruction.Parts[0].Text)
		req.Messages = append(req.Messages, Message{Role: "system", Content: b})
	}
	for _, c := range g.Contents {
		var text strings.Builder
		for _, p := range c.Parts {
			text.WriteString(p.Text)
		}
		b, _ := json.Marshal(text.String())
		req.Messages = append(req.Messages, Message{Role: c.Role, Content: b})
	}
	req.Temperature = g.GenerationConfig.Temperature
	if tc := g.GenerationConfig.ThinkingConfig; tc != nil {
		req.ThinkingBudget = tc.ThinkingBudget
	}
	return req.Stream
}

func geminiResponse(rep Reply, text string, last bool) map[string]any {
	cand := map[string]any{"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": text}}}}
	if last {
		reason := rep.FinishReason
		if reason == "" {
			reason = "STOP"
		}
		cand["finishReason"] = reason
	}
	resp := map[string]any{"candidates": []any{cand}}
	if rep.Blocked != "" {
		resp = map[string]any{"promptFeedback": map[string]any{"blockReason": rep.Blocked}}
	}
	if last {
		resp["usageMetadata"] = map[string]any{"promptTokenCount": max(rep.PromptTokens, 1), "candidatesTokenCount": max(rep.CompletionTokens, 1)}
	}
	return resp
}

// serveGemini answers like the Gemini API: one JSON object, or server-sent
// events of partial responses.
func (s *Server) serveGemini(w http.ResponseWriter, r *http.Request, req Request, rep Reply) bool {
	if rep.Status != 0 && rep.Status != http.StatusOK {
		if rep.RetryAfter != "" {
			w.Header().Set("Retry-After", rep.RetryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(rep.Status)
		msg := rep.Message
		if msg == "" {
			msg = fmt.Sprintf("fake failure %d", rep.Status)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": rep.Status, "message": msg, "status": "UNAVAILABLE"}})
		return true
	}
	if !req.Stream {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(geminiResponse(rep, rep.Content, true))
		return true
	}
	w.Header().Set("Content-Type", "text/event-stream")
	flusher, _ := w.(http.Flusher)
	pieces := splitKeep(rep.Content)
	if len(pieces) == 0 {
		pieces = []string{""}
	}
	for i, p := range pieces {
		if rep.ResetAfter > 0 && i == rep.ResetAfter {
			drop(w)
			return true
		}
		b, _ := json.Marshal(geminiResponse(rep, p, i == len(pieces)-1))
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		if r.Context().Err() != nil {
			return false
		}
	}
	return true
}
