package secrets

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
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

// TestARedisPasswordIsASecretHoweverItsURLIsWritten: a password with a
// "%" that is no escape made REDIS_URL fail to parse, and then no password
// was taken from it, though memory's error quoted the URL whole; a
// Sentinel's password in the query was never taken.
func TestARedisPasswordIsASecretHoweverItsURLIsWritten(t *testing.T) {
	t.Parallel()
	for url, want := range map[string][]string{
		"redis://:S3cr3t%zzPassw0rd@127.0.0.1:6390/0":                         {"S3cr3t%zzPassw0rd"},
		"redis://user:pa%40ssword@host:1/0":                                   {"pa%40ssword", "pa@ssword"},
		"redis://u:p@ss#w/rd@host:1/0":                                        {"p@ss#w/rd"},
		"redis://h:1?master_name=m&password=sentinel-pw-123":                  {"sentinel-pw-123"},
		"redis://h:1?master_name=m&sentinel_password=s%2Bpassword":            {"s%2Bpassword", "s+password"},
		"redis://localhost:6379/0":                                            nil,
		"redis://:Hunter2?xyzzy@h:1/0":                                        {"Hunter2?xyzzy"},
		"redis://:Zm9vYmFy/c2VjcmV0@h:1/0?master_name=m&password=second-pw-1": {"Zm9vYmFy/c2VjcmV0", "second-pw-1"},
		// An "@" in the query: the credentials are before the first "?" too.
		"redis://h:1?master_name=m&sentinel_password=a@bcdefgh&password=xyz12345": {"xyz12345", "a@bcdefgh",
			"1?master_name=m&sentinel_password=a"}, // read as a password holding "?" too: scrubbed for nothing
		"redis://u:pw123456@h:1/0?client_name=me@host": {"pw123456"},
	} {
		s := Load(func(k string) string { return map[string]string{"REDIS_URL": url}[k] }, nil)
		if diff := cmp.Diff(want, s.Values(), cmpopts.SortSlices(func(a, b string) bool { return a < b }),
			cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s: secret values (-want +got):\n%s", url, diff)
		}
	}
}
