package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/zenmcp/zen/services/platform/fakemodel"
)

// referenceEnvExample is the reference server's .env.example as a user
// copies it: placeholder keys for every provider, inline comments, and the
// Docker-only settings the server ignores.
const referenceEnvExample = `# Zen MCP Server Environment Configuration
# Copy this file to .env and fill in your values

# API Keys - At least one is required
# Get your Gemini API key from: https://makersuite.google.com/app/apikey
GEMINI_API_KEY=your_gemini_api_key_here

# Get your OpenAI API key from: https://platform.openai.com/api-keys
OPENAI_API_KEY=your_openai_api_key_here

# Get your X.AI API key from: https://console.x.ai/
XAI_API_KEY=your_xai_api_key_here

# DIAL provides unified access to multiple AI models through a single API
DIAL_API_KEY=your_dial_api_key_here
# DIAL_API_HOST=https://core.dialx.ai  # Optional: Base URL without /openai suffix (auto-appended)

# Option 2: Use OpenRouter for access to multiple models through one API
OPENROUTER_API_KEY=your_openrouter_api_key_here

# Option 3: Use custom API endpoints for local models (Ollama, vLLM, LM Studio, etc.)
# CUSTOM_API_URL=http://localhost:11434/v1  # Ollama example
# CUSTOM_API_KEY=                                      # Empty for Ollama (no auth needed)
# CUSTOM_MODEL_NAME=llama3.2                          # Default model name

# Optional: Default model to use
DEFAULT_MODEL=auto  # Claude picks best model for each task (recommended)

# Optional: Default thinking mode for ThinkDeep tool
DEFAULT_THINKING_MODE_THINKDEEP=high

# Optional: Conversation timeout (hours) and turns
CONVERSATION_TIMEOUT_HOURS=3
MAX_CONVERSATION_TURNS=20

# Optional: Logging level (DEBUG, INFO, WARNING, ERROR)
LOG_LEVEL=DEBUG

# Optional: Tool Selection
DISABLED_TOOLS=analyze,refactor,testgen,secaudit,docgen,tracer

# Docker Configuration
COMPOSE_PROJECT_NAME=zen-mcp
TZ=UTC
LOG_MAX_SIZE=10MB
`

// referenceEnv is referenceEnvExample as a user edits it: each edit
// replaces the line that sets (or, commented out, would set) its variable,
// and edits for variables the example lacks are added at the end.
func referenceEnv(edits map[string]string) string {
	var out []string
	done := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSuffix(referenceEnvExample, "\n"), "\n") {
		key, _, ok := strings.Cut(strings.TrimPrefix(line, "# "), "=")
		if value, edit := edits[key]; ok && edit {
			line, done[key] = key+"="+value, true
		}
		out = append(out, line)
	}
	for _, key := range sortedKeys(edits) {
		if !done[key] {
			out = append(out, key+"="+edits[key])
		}
	}
	return strings.Join(out, "\n") + "\n"
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// received is what one provider's fake got from a call.
type received struct {
	Provider, Model, Effort string
}

// TestAReferenceDotEnvWorksUnchanged: a .env written for the reference, in
// zen's working directory, configures zen as it configured the reference.
// Each provider is its own fake, so which fake a call reaches says which
// provider served it.
func TestAReferenceDotEnvWorksUnchanged(t *testing.T) {
	t.Parallel()
	type call struct {
		model, thinking string
		want            received
	}
	for _, tc := range []struct {
		name      string
		providers []string
		edits     func(urls map[string]string) map[string]string
		calls     []call
	}{{
		name:      "openrouter only",
		providers: []string{"openrouter"},
		edits: func(urls map[string]string) map[string]string {
			return map[string]string{"OPENROUTER_API_KEY": "sk-or-v1-abcdef0123456789",
				"OPENROUTER_BASE_URL": urls["openrouter"]}
		},
		calls: []call{
			{"flash", "", received{"openrouter", "google/gemini-2.5-flash", ""}},
			{"pro", "", received{"openrouter", "google/gemini-3-pro-preview", ""}},
			{"o3", "high", received{"openrouter", "openai/o3", "high"}},
		},
	}, {
		name:      "gemini and openai",
		providers: []string{"gemini", "openai"},
		edits: func(urls map[string]string) map[string]string {
			return map[string]string{"GEMINI_API_KEY": "AIzaSyabcdef0123456789", "GEMINI_BASE_URL": urls["gemini"],
				"OPENAI_API_KEY": "sk-proj-abcdef0123456789", "OPENAI_BASE_URL": urls["openai"]}
		},
		calls: []call{
			{"flash", "", received{"gemini", "gemini-2.5-flash", ""}},
			{"pro", "", received{"gemini", "gemini-3-pro-preview", ""}},
			{"o3", "high", received{"openai", "o3", "high"}},
		},
	}, {
		name:      "ollama with its timeouts",
		providers: []string{"ollama"},
		edits: func(urls map[string]string) map[string]string {
			return map[string]string{"CUSTOM_API_URL": urls["ollama"] + "  # Ollama example",
				"CUSTOM_API_KEY": "", "CUSTOM_MODEL_NAME": "llama3.2",
				"CUSTOM_CONNECT_TIMEOUT": "60.0", "CUSTOM_READ_TIMEOUT": "1800.0",
				"CUSTOM_WRITE_TIMEOUT": "1800.0", "CUSTOM_POOL_TIMEOUT": "1800.0"}
		},
		calls: []call{{"llama3.2", "", received{"ollama", "llama3.2", ""}}},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fakes, urls := map[string]*fakemodel.Server{}, map[string]string{}
			for _, p := range tc.providers {
				fakes[p] = fakemodel.New(t)
				urls[p] = fakes[p].URL()
				if p == "gemini" {
					urls[p] = fakes[p].GeminiURL()
				}
			}
			if f := fakes["ollama"]; f != nil {
				// Ollama's OpenAI endpoint may answer a streaming request
				// with one JSON completion.
				f.SetReply(func(fakemodel.Request) fakemodel.Reply {
					return fakemodel.Reply{Content: "fake reply", IgnoreStream: true}
				})
			}
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ".env"), []byte(referenceEnv(tc.edits(urls))), 0o600); err != nil {
				t.Fatal(err)
			}
			p := startZenIn(t, dir, nil, []string{"mcp"}, serveArgs()...)
			cs := connectHTTP(t, "http://"+p.addr("mcp")+"/mcp")
			for _, c := range tc.calls {
				args := map[string]any{"prompt": "hi", "working_directory_absolute_path": t.TempDir(), "model": c.model}
				if c.thinking != "" {
					args["thinking_mode"] = c.thinking
				}
				seen := map[string]int{}
				for name, f := range fakes {
					seen[name] = len(f.Requests())
				}
				if res, _ := callTool(t, cs, "chat", args); res.IsError {
					t.Fatalf("chat with %s: %s", c.model, text(res))
				}
				var got []received
				for _, name := range tc.providers {
					for _, r := range fakes[name].Requests()[seen[name]:] {
						got = append(got, received{name, r.Model, r.ReasoningEffort})
					}
				}
				if diff := cmp.Diff([]received{c.want}, got); diff != "" {
					t.Errorf("chat with %s thinking %q reached (-want +got):\n%s", c.model, c.thinking, diff)
				}
			}
		})
	}
}
