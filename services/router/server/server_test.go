package server

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
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
}

// TestNoProviderStartsAndSaysHowToAddOne: with no provider (or only a
// placeholder key) the router still starts, and says which variables to
// set and in which files, in the order they are read. The files' paths
// are for the startup log, and for clients only where the binary says
// they are the user's own (ShowEnvFiles); health's reason, which needs no
// token, describes the files without them.
func TestNoProviderStartsAndSaysHowToAddOne(t *testing.T) {
	// An absolute path starts a word with "/" ("zen/.env" and "~/.config"
	// name no one's directory).
	absolutePath := regexp.MustCompile(`(^|[\s(,;:="'])/[^\s]`)
	const project, user = "/work/project/.env", "/home/u/.config/zen/.env"
	vars := []string{"no model provider is configured", "GEMINI_API_KEY", "OPENAI_API_KEY",
		"AZURE_OPENAI_API_KEY with AZURE_OPENAI_ENDPOINT", "XAI_API_KEY", "DIAL_API_KEY", "CUSTOM_API_URL",
		"OPENROUTER_API_KEY"}
	withPaths := append(slices.Clone(vars), project+", then "+user)
	withoutPaths := append(slices.Clone(vars), envFilesInGeneral)
	for _, tc := range []struct {
		name            string
		env             map[string]string
		show            bool
		clientsSee      []string
		clientsDoNotSee string
	}{
		{name: "nothing set", clientsSee: withoutPaths, clientsDoNotSee: "/"},
		{name: "placeholder key", env: map[string]string{"OPENAI_API_KEY": "your_openai_api_key_here"},
			clientsSee: withoutPaths, clientsDoNotSee: "/"},
		{name: "the user's own server", show: true, clientsSee: withPaths},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := load(t, tc.env)
			cfg.EnvFiles, cfg.ShowEnvFiles = []string{project, user}, tc.show
			var log bytes.Buffer
			s, err := New(cfg, slog.New(slog.NewTextHandler(&log, nil)))
			if err != nil {
				t.Fatalf("no provider: New = %v, want a router that starts", err)
			}
			list, err := s.api.ListModels(t.Context(), &routerv1.ListModelsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				what, text string
				want       []string
				noPath     bool
			}{
				{"NotReady() (health's reason)", s.NotReady(), withoutPaths, true},
				{"the setup help clients see", list.GetSetupHelp(), tc.clientsSee, !tc.show},
				{"the startup log", log.String(), withPaths[1:], false},
			} {
				for _, want := range c.want {
					if !strings.Contains(c.text, want) {
						t.Errorf("%s = %q; missing %q", c.what, c.text, want)
					}
				}
				if c.noPath && absolutePath.MatchString(c.text) {
					t.Errorf("%s = %q; want no absolute path in it", c.what, c.text)
				}
			}
		})
	}
	cfg, _ := load(t, map[string]string{"CUSTOM_API_URL": "http://127.0.0.1:1/v1"})
	if s, err := New(cfg, slog.New(slog.DiscardHandler)); err != nil {
		t.Errorf("with a provider: %v", err)
	} else if s.NotReady() != "" {
		t.Errorf("with a provider: NotReady() = %q; want ready", s.NotReady())
	}
}
