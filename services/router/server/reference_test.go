package server

import (
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// startRouter runs the router role configured from env, as the zen binary
// does (serveRouter), and returns a client of its gRPC service.
func startRouter(t *testing.T, env map[string]string) routerv1.RouterServiceClient {
	t.Helper()
	cfg, err := load(t, env)
	if err != nil {
		t.Fatal(err)
	}
	return serveRouter(t, cfg)
}

// resolved says which provider serves each name, and under which model.
func resolved(t *testing.T, router routerv1.RouterServiceClient, names ...string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, name := range names {
		res, err := router.ResolveModel(t.Context(), &routerv1.ResolveModelRequest{Model: name})
		if err != nil {
			out[name] = err.Error()
			continue
		}
		out[name] = res.GetModel().GetProvider() + " " + res.GetModel().GetName()
	}
	return out
}

// A .env written for the reference with only OPENROUTER_API_KEY names
// models by the reference's aliases; they resolve through OpenRouter, and a
// native provider's key takes the names it also knows, in the reference's
// priority order (issue 14, item 1).
func TestReferenceAliasesResolveByProviderPriority(t *testing.T) {
	t.Parallel()
	names := []string{"flash", "pro", "o3", "o3-mini", "o4-mini", "gpt5", "codex", "opus", "sonnet", "5.1"}
	tests := []struct {
		name string
		env  map[string]string
		want map[string]string
	}{
		{"openrouter only", map[string]string{"OPENROUTER_API_KEY": "r"}, map[string]string{
			"flash": "openrouter google/gemini-2.5-flash", "pro": "openrouter google/gemini-3-pro-preview",
			"o3": "openrouter openai/o3", "o3-mini": "openrouter openai/o3-mini", "o4-mini": "openrouter openai/o4-mini",
			"gpt5": "openrouter openai/gpt-5", "codex": "openrouter openai/gpt-5-codex",
			"opus": "openrouter anthropic/claude-opus-4.5", "sonnet": "openrouter anthropic/claude-sonnet-4.5",
			"5.1": "openrouter openai/gpt-5.2",
		}},
		{"gemini takes its own names", map[string]string{"OPENROUTER_API_KEY": "r", "GEMINI_API_KEY": "g"}, map[string]string{
			"flash": "gemini gemini-2.5-flash", "pro": "gemini gemini-3-pro-preview",
			"o3": "openrouter openai/o3", "o3-mini": "openrouter openai/o3-mini", "o4-mini": "openrouter openai/o4-mini",
			"gpt5": "openrouter openai/gpt-5", "codex": "openrouter openai/gpt-5-codex",
			"opus": "openrouter anthropic/claude-opus-4.5", "sonnet": "openrouter anthropic/claude-sonnet-4.5",
			"5.1": "openrouter openai/gpt-5.2",
		}},
		{"openai too", map[string]string{"OPENROUTER_API_KEY": "r", "GEMINI_API_KEY": "g", "OPENAI_API_KEY": "o"},
			map[string]string{
				"flash": "gemini gemini-2.5-flash", "pro": "gemini gemini-3-pro-preview",
				"o3": "openai o3", "o3-mini": "openai o3-mini", "o4-mini": "openai o4-mini",
				"gpt5": "openai gpt-5", "codex": "openai gpt-5.1-codex",
				"opus": "openrouter anthropic/claude-opus-4.5", "sonnet": "openrouter anthropic/claude-sonnet-4.5",
				"5.1": "openrouter openai/gpt-5.2",
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if diff := cmp.Diff(tt.want, resolved(t, startRouter(t, tt.env), names...)); diff != "" {
				t.Errorf("provider and model for each name (-want +got):\n%s", diff)
			}
		})
	}
}

// thinking_mode high on o3 reaches the provider as reasoning_effort high,
// through the router's gRPC service to a fake speaking the wire format,
// whichever provider serves o3 (issue 14, item 2).
func TestThinkingModeReachesTheProviderAsReasoningEffort(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, model, mode string
		env               func(url string) map[string]string
		want              fakemodel.Request
	}{
		{"o3 at openai", "o3", "high", func(url string) map[string]string {
			return map[string]string{"OPENAI_API_KEY": "o", "OPENAI_BASE_URL": url}
		}, fakemodel.Request{Model: "o3", ReasoningEffort: "high"}},
		{"o3 at openrouter", "o3", "high", func(url string) map[string]string {
			return map[string]string{"OPENROUTER_API_KEY": "r", "OPENROUTER_BASE_URL": url}
		}, fakemodel.Request{Model: "openai/o3", ReasoningEffort: "high"}},
		{"o4-mini at openrouter, low", "o4-mini", "low", func(url string) map[string]string {
			return map[string]string{"OPENROUTER_API_KEY": "r", "OPENROUTER_BASE_URL": url}
		}, fakemodel.Request{Model: "openai/o4-mini", ReasoningEffort: "low"}},
		{"o3-pro at openai, responses API", "o3-pro", "max", func(url string) map[string]string {
			return map[string]string{"OPENAI_API_KEY": "o", "OPENAI_BASE_URL": url}
		}, fakemodel.Request{Model: "o3-pro", ReasoningEffort: "high"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := fakemodel.New(t)
			fake.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "thought hard"} })
			router := startRouter(t, tt.env(fake.URL()))
			stream, err := router.Generate(t.Context(), &routerv1.GenerateRequest{Model: tt.model, ThinkingMode: tt.mode,
				Messages: []*routerv1.Message{{Role: "user", Content: "think"}}})
			if err != nil {
				t.Fatal(err)
			}
			for {
				if _, err := stream.Recv(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("generate %s: %v", tt.model, err)
				}
			}
			reqs := fake.Requests()
			if len(reqs) != 1 {
				t.Fatalf("the provider saw %d requests, want 1", len(reqs))
			}
			got := fakemodel.Request{Model: reqs[0].Model, ReasoningEffort: reqs[0].ReasoningEffort}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("what the provider received (-want +got):\n%s", diff)
			}
		})
	}
}
