package secrets

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLoadFindsZenSecrets(t *testing.T) {
	t.Parallel()
	tokens := filepath.Join(t.TempDir(), "tokens")
	body := "# clients\nalice alice-token-0123456789\nbob   bob-token-0123456789ab\n"
	if err := os.WriteFile(tokens, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{
		"ZEN_AUTH_TOKEN":             "auth-token-0123456789",
		"ZEN_AUTH_TOKENS_FILE":       tokens,
		"ZEN_SERVICE_TOKEN":          "service-token-0123456789",
		"OPENAI_API_KEY":             "sk-openai-0123456789",
		"SOMEVENDOR_API_KEY":         "vendor-key-0123456789",
		"GEMINI_API_KEY":             "short",
		"REDIS_URL":                  "redis://user:redis-password-1@localhost:6379/0",
		"OTEL_EXPORTER_OTLP_HEADERS": "authorization=Bearer otel-token-0123456789,x-team=production-eu,x-api-key=otel-key-0123456789",
		"LOCALE":                     "not-a-secret-at-all",
	}
	s := Load(func(k string) string { return env[k] }, []string{"SOMEVENDOR_API_KEY", "LOCALE"})
	want := []string{
		"Bearer otel-token-0123456789", "alice-token-0123456789", "auth-token-0123456789", "bob-token-0123456789ab",
		"otel-key-0123456789", "otel-token-0123456789", "redis-password-1", "service-token-0123456789",
		"sk-openai-0123456789", "vendor-key-0123456789",
	}
	if diff := cmp.Diff(want, s.Values()); diff != "" {
		t.Errorf("secret values (-want +got):\n%s", diff)
	}
}

func TestLoadToleratesAMissingTokensFile(t *testing.T) {
	t.Parallel()
	env := map[string]string{"ZEN_AUTH_TOKEN": "auth-token-0123456789", "ZEN_AUTH_TOKENS_FILE": "/nonexistent/tokens"}
	s := Load(func(k string) string { return env[k] }, nil)
	if diff := cmp.Diff([]string{"auth-token-0123456789"}, s.Values()); diff != "" {
		t.Errorf("secret values (-want +got):\n%s", diff)
	}
}

func TestZenCredential(t *testing.T) {
	t.Parallel()
	got := map[string]bool{}
	for _, name := range []string{"ZEN_AUTH_TOKEN", "ZEN_AUTH_TOKENS_FILE", "ZEN_SERVICE_TOKEN", "ZEN_GRPC_TLS_KEY",
		"ZEN_GRPC_TLS_CERT", "ZEN_GRPC_TLS_CA", "GEMINI_API_KEY", "PATH", "ZEN_MCP_ADDR"} {
		got[name] = ZenCredential(name)
	}
	want := map[string]bool{"ZEN_AUTH_TOKEN": true, "ZEN_AUTH_TOKENS_FILE": true, "ZEN_SERVICE_TOKEN": true,
		"ZEN_GRPC_TLS_KEY": true, "ZEN_GRPC_TLS_CERT": true, "ZEN_GRPC_TLS_CA": true,
		"GEMINI_API_KEY": false, "PATH": false, "ZEN_MCP_ADDR": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ZenCredential (-want +got):\n%s", diff)
	}
}
