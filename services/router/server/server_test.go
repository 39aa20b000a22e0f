package server

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t *testing.T, env map[string]string) (Config, error) {
	t.Helper()
	return Load(func(k string) string { return env[k] })
}

func TestCatalogueOverrideErrorsNameTheVariableAndFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "openai.json")
	if err := os.WriteFile(path, []byte(`{"models":[{"model_name":"x","context_window":1,"max_tokens":9}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := load(t, map[string]string{"OPENAI_API_KEY": "k", "OPENAI_MODELS_CONFIG_PATH": path})
	if err != nil {
		t.Fatal(err)
	}
	_, err = New(cfg, slog.New(slog.DiscardHandler))
	if err == nil || !strings.Contains(err.Error(), "OPENAI_MODELS_CONFIG_PATH") || !strings.Contains(err.Error(), path) ||
		!strings.Contains(err.Error(), "max_output_tokens") {
		t.Errorf("err = %v", err)
	}
}

func configured(cfg Config) map[string]bool {
	out := map[string]bool{}
	for _, p := range cfg.Providers {
		if p.Configured {
			out[p.Name] = true
		}
	}
	return out
}

func TestEachProviderIsConfiguredByItsVariables(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want string
	}{
		{"gemini", map[string]string{"GEMINI_API_KEY": "g"}, "gemini"},
		{"openai", map[string]string{"OPENAI_API_KEY": "sk-1"}, "openai"},
		{"azure needs its endpoint", map[string]string{"AZURE_OPENAI_API_KEY": "a"}, ""},
		{"azure", map[string]string{"AZURE_OPENAI_API_KEY": "a", "AZURE_OPENAI_ENDPOINT": "https://x.openai.azure.com"}, "azure"},
		{"xai", map[string]string{"XAI_API_KEY": "x"}, "xai"},
		{"dial", map[string]string{"DIAL_API_KEY": "d"}, "dial"},
		{"custom needs no key", map[string]string{"CUSTOM_API_URL": "http://localhost:11434/v1"}, "custom"},
		{"openrouter", map[string]string{"OPENROUTER_API_KEY": "o"}, "openrouter"},
		{"placeholders are not keys", map[string]string{"OPENAI_API_KEY": "your_openai_api_key_here", "GEMINI_API_KEY": "your_gemini_api_key_here"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := load(t, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			got := configured(cfg)
			if len(got) > 1 || tt.want == "" && len(got) != 0 || tt.want != "" && !got[tt.want] {
				t.Errorf("configured = %v, want only %q", got, tt.want)
			}
		})
	}
	order := []string{}
	cfg, _ := load(t, nil)
	for _, p := range cfg.Providers {
		order = append(order, p.Name)
	}
	if got := strings.Join(order, ","); got != "gemini,openai,azure,xai,dial,custom,openrouter" {
		t.Errorf("priority order = %s", got)
	}
	if _, err := load(t, map[string]string{"OPENAI_BASE_URL": "localhost:8000"}); err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("a base URL without scheme: err = %v", err)
	}
}

func TestAllowListsLimitWhatIsUsable(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	cfg, _ := load(t, map[string]string{"OPENAI_API_KEY": "k", "OPENAI_ALLOWED_MODELS": " MINI , o3,nonsense"})
	if _, err := New(cfg, logger); err != nil {
		t.Fatal(err)
	}
	cfg, _ = load(t, map[string]string{"OPENAI_API_KEY": "k", "OPENAI_ALLOWED_MODELS": "nonsense"})
	if _, err := New(cfg, logger); err == nil || !strings.Contains(err.Error(), "ALLOWED_MODELS") {
		t.Errorf("an allow-list leaving nothing: err = %v", err)
	}
	cfg, _ = load(t, nil)
	if _, err := New(cfg, logger); err == nil || !strings.Contains(err.Error(), "at least one model provider") {
		t.Errorf("no provider: err = %v", err)
	}
}
