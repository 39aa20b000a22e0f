package provider

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func ask(t *testing.T, g Generator, req Request) (Result, string, error) {
	t.Helper()
	if req.Messages == nil {
		req.Messages = []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hello"}}
	}
	var deltas strings.Builder
	res, err := g.Generate(context.Background(), req, func(d string) { deltas.WriteString(d) })
	return res, deltas.String(), err
}

func TestGeminiWireFormat(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "streamed from gemini", PromptTokens: 11, CompletionTokens: 4}
	})
	g, err := NewGemini(context.Background(), fake.GeminiURL(), "gemini-key", NewHTTPClient(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	budget := int32(1024)
	temp := 0.4
	for _, stream := range []bool{true, false} {
		res, deltas, err := ask(t, g, Request{Model: "gemini-2.5-flash", Stream: stream, ThinkingBudget: &budget, Temperature: &temp})
		if err != nil {
			t.Fatal(err)
		}
		if res.Content != "streamed from gemini" || deltas != res.Content || res.Usage.InputTokens != 11 || res.FinishReason != "STOP" {
			t.Errorf("stream=%v: %+v (deltas %q)", stream, res, deltas)
		}
	}
	for _, r := range fake.Requests() {
		if r.Header.Get("X-Goog-Api-Key") != "gemini-key" || r.Model != "gemini-2.5-flash" || r.Messages[0].Role != "system" ||
			r.Messages[0].Text() != "be brief" || r.ThinkingBudget == nil || *r.ThinkingBudget != 1024 || *r.Temperature != 0.4 {
			t.Errorf("request %s: %+v", r.Path, r)
		}
	}
	if p := fake.Requests()[0].Path; !strings.HasSuffix(p, "/models/gemini-2.5-flash:streamGenerateContent") {
		t.Errorf("streaming path %s", p)
	}
}

func TestGeminiFailures(t *testing.T) {
	tests := []struct {
		name      string
		reply     fakemodel.Reply
		retryable bool
		want      string
	}{
		{"blocked prompt", fakemodel.Reply{Blocked: "SAFETY"}, false, "blocked by the content safety policy (SAFETY)"},
		{"rate limited", fakemodel.Reply{Status: 429, RetryAfter: "2"}, true, "Gemini API error for model gemini-2.5-flash: HTTP 429"},
		{"server error", fakemodel.Reply{Status: 500}, true, "HTTP 500"},
		{"bad request", fakemodel.Reply{Status: 400, Message: "key gemini-key is not valid"}, false, "[REDACTED]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return tt.reply })
			g, _ := NewGemini(context.Background(), fake.GeminiURL(), "gemini-key", NewHTTPClient(5*time.Second))
			_, _, err := ask(t, g, Request{Model: "gemini-2.5-flash", Stream: true})
			var perr *Error
			if !errors.As(err, &perr) || perr.Retryable != tt.retryable || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "gemini-key") {
				t.Fatalf("err = %v (retryable %v), want %q, retryable %v", err, perr != nil && perr.Retryable, tt.want, tt.retryable)
			}
			if tt.reply.RetryAfter != "" && perr.RetryAfter != 2*time.Second {
				t.Errorf("RetryAfter = %v, want 2s", perr.RetryAfter)
			}
		})
	}
}

func TestGeminiImagesAreInlineParts(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "a cat"} })
	g, _ := NewGemini(context.Background(), fake.GeminiURL(), "k", NewHTTPClient(5*time.Second))
	img := "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte("png bytes"))
	if _, _, err := ask(t, g, Request{Model: "gemini-2.5-flash", Messages: []Message{{Role: "user", Content: "what?", Images: []string{img}}}}); err != nil {
		t.Fatal(err)
	}
	if body := string(fake.Requests()[0].Body); !strings.Contains(body, `"inlineData"`) || !strings.Contains(body, `"mimeType":"image/png"`) {
		t.Errorf("body = %s", body)
	}
}

func TestAzureStyleDeploymentsAndHeaders(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "from a deployment"} })
	c := NewCompatWith("Azure OpenAI", strings.TrimSuffix(fake.URL(), "/v1"), "azure-key", NewHTTPClient(5*time.Second), CompatOptions{
		APIVersion: "2024-02-15-preview", Deployment: func(string) string { return "my-deployment" },
	})
	if _, _, err := ask(t, c, Request{Model: "gpt-4.1", Stream: true}); err != nil {
		t.Fatal(err)
	}
	r := fake.Requests()[0]
	if r.Path != "/openai/deployments/my-deployment/chat/completions" || r.Header.Get("Api-Key") != "azure-key" {
		t.Errorf("path %s, api-key %q", r.Path, r.Header.Get("Api-Key"))
	}
}

func TestOpenRouterHeadersAndReasoningEffort(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "ok"} })
	c := NewCompatWith("OpenRouter", fake.URL(), "or-key", NewHTTPClient(5*time.Second), CompatOptions{
		Headers: map[string]string{"HTTP-Referer": "https://example.test/zen", "X-Title": "zen MCP server"},
	})
	if _, _, err := ask(t, c, Request{Model: "openai/o3", Stream: true, ReasoningEffort: "high"}); err != nil {
		t.Fatal(err)
	}
	r := fake.Requests()[0]
	if r.Header.Get("HTTP-Referer") != "https://example.test/zen" || r.Header.Get("X-Title") != "zen MCP server" ||
		r.ReasoningEffort != "high" || r.Header.Get("Authorization") != "Bearer or-key" {
		t.Errorf("request = %+v", r)
	}
}

func TestResponsesAPIWireFormat(t *testing.T) {
	fake := fakemodel.New(t)
	fake.SetReply(func(fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Content: "answer from responses", PromptTokens: 9, CompletionTokens: 3}
	})
	for _, tc := range []struct {
		name      string
		omitStore bool
	}{{"openai", false}, {"openrouter", true}} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewCompatWith("OpenAI", fake.URL(), "k", NewHTTPClient(5*time.Second), CompatOptions{OmitStore: tc.omitStore})
			for _, stream := range []bool{true, false} {
				before := len(fake.Requests())
				res, deltas, err := ask(t, c, Request{Model: "gpt-5.1-codex", Stream: stream, Responses: true, ReasoningEffort: "high"})
				if err != nil {
					t.Fatal(err)
				}
				if res.Content != "answer from responses" || deltas != res.Content || res.Usage.InputTokens != 9 || res.FinishReason != "stop" {
					t.Errorf("stream=%v: %+v", stream, res)
				}
				r := fake.Requests()[before]
				if r.Path != "/v1/responses" || r.ReasoningEffort != "high" || r.Messages[0].Role != "system" || r.Messages[1].Text() != "hello" ||
					(r.Store == nil) != tc.omitStore {
					t.Errorf("request %+v (store %v)", r, r.Store)
				}
			}
		})
	}
}
