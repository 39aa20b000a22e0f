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

func TestProvidersNeedRealCredentials(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []bool // openai, custom configured
	}{
		{"openai", map[string]string{"OPENAI_API_KEY": "sk-1"}, []bool{true, false}},
		{"placeholder", map[string]string{"OPENAI_API_KEY": "your_openai_api_key_here", "CUSTOM_API_URL": "http://h:1/v1"}, []bool{false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := load(t, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			for i, p := range cfg.Providers {
				if p.Configured != tt.want[i] {
					t.Errorf("%s configured = %v, want %v", p.Name, p.Configured, tt.want[i])
				}
			}
		})
	}
	if _, err := load(t, map[string]string{"OPENAI_BASE_URL": "localhost:8000"}); err == nil || !strings.Contains(err.Error(), "OPENAI_BASE_URL") {
		t.Errorf("a base URL without scheme: err = %v", err)
	}
}
