package main

import (
	"strings"
	"testing"

	"github.com/zenmcp/zen/services/platform/fakemodel"
)

func TestSeveralProvidersThroughTheStack(t *testing.T) {
	gemini, openai, openrouter := fakemodel.New(t), fakemodel.New(t), fakemodel.New(t)
	gemini.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "gemini thought about it"} })
	openai.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Status: 503} })
	openrouter.SetReply(func(fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Content: "served by openrouter"} })
	st := serveStack(t, map[string]string{
		"GEMINI_API_KEY": "g-key", "GEMINI_BASE_URL": gemini.GeminiURL(), "GOOGLE_ALLOWED_MODELS": "flash,pro",
		"OPENAI_API_KEY": "o-key", "OPENAI_BASE_URL": openai.URL(), "OPENAI_ALLOWED_MODELS": "gpt-5",
		"OPENROUTER_API_KEY": "r-key", "OPENROUTER_BASE_URL": openrouter.URL(), "OPENROUTER_ALLOWED_MODELS": "openai/gpt-5",
		"ZEN_PROVIDER_ATTEMPTS": "2",
	})

	_, models := getJSON(t, st.gateway+"/v1/models")
	usable := map[string]bool{}
	for _, m := range models["models"].([]any) {
		if mm := m.(map[string]any); mm["configured"] == true {
			usable[mm["name"].(string)] = true
		}
	}
	want := []string{"gemini-3-pro-preview", "gemini-2.5-flash", "gpt-5", "openai/gpt-5"}
	if len(usable) != len(want) {
		t.Errorf("usable models = %v, want exactly %v", usable, want)
	}
	for _, w := range want {
		if !usable[w] {
			t.Errorf("%s should be usable; usable = %v", w, usable)
		}
	}
	_, listing := callTool(t, st.session, "listmodels", map[string]any{})
	if content := listing["content"].(string); !strings.Contains(content, "**Total Available Models**: 4") {
		t.Errorf("listmodels:\n%s", content)
	}

	res, got := callTool(t, st.session, "chat", map[string]any{"prompt": "think hard", "working_directory_absolute_path": t.TempDir(),
		"model": "pro", "thinking_mode": "high"})
	if res.IsError || got["metadata"].(map[string]any)["provider_used"] != "gemini" {
		t.Fatalf("gemini chat: %s", text(res))
	}
	r := gemini.Requests()[0]
	if r.Model != "gemini-3-pro-preview" || r.ThinkingBudget == nil || *r.ThinkingBudget != 21954 || r.Header.Get("X-Goog-Api-Key") != "g-key" {
		t.Errorf("gemini request: model %s, thinking %v", r.Model, r.ThinkingBudget)
	}

	res, got = callTool(t, st.session, "chat", map[string]any{"prompt": "falls back", "working_directory_absolute_path": t.TempDir(), "model": "gpt-5"})
	if res.IsError || !strings.HasPrefix(got["content"].(string), "served by openrouter") || got["metadata"].(map[string]any)["provider_used"] != "openrouter" {
		t.Fatalf("fallback chat: %s", text(res))
	}
	if n := len(openai.Requests()); n != 2 {
		t.Errorf("the failing provider was tried %d times, want ZEN_PROVIDER_ATTEMPTS=2", n)
	}
	if rr := openrouter.Requests()[0]; rr.Model != "openai/gpt-5" || rr.Header.Get("X-Title") != "zen MCP server" {
		t.Errorf("openrouter request: model %s, title %q", rr.Model, rr.Header.Get("X-Title"))
	}
}

// TestChatThinksAtMediumUnlessTold: the reference's simple tools default
// to the medium thinking mode; zen's chat sent a Gemini model none, and
// Gemini thought as it pleased (cost and latency the user did not pick).
func TestChatThinksAtMediumUnlessTold(t *testing.T) {
	t.Parallel()
	gemini := fakemodel.New(t)
	st := serveStack(t, map[string]string{"GEMINI_API_KEY": "g-key", "GEMINI_BASE_URL": gemini.GeminiURL()})
	for mode, want := range map[string]int{"": 8110, "low": 1966} { // of gemini-2.5-flash's 24,576
		args := map[string]any{"prompt": "think", "working_directory_absolute_path": t.TempDir(),
			"model": "gemini-2.5-flash"}
		if mode != "" {
			args["thinking_mode"] = mode
		}
		if res, _ := callTool(t, st.session, "chat", args); res.IsError {
			t.Fatalf("chat: %s", text(res))
		}
		reqs := gemini.Requests()
		if b := reqs[len(reqs)-1].ThinkingBudget; b == nil || *b != want {
			t.Errorf("thinking_mode %q: budget %v, want %d", mode, b, want)
		}
	}
}
