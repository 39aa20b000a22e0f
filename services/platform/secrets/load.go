package secrets

import (
	"net/url"
	"slices"
	"strings"

	"github.com/zenmcp/zen/services/platform/auth"
	"github.com/zenmcp/zen/services/platform/config"
)

// zenCredentials are the variables that hold or locate zen's own
// credentials. They belong to zen alone: no subprocess (a clink CLI) is
// ever given them, whatever its configuration asks.
var zenCredentials = []string{"ZEN_AUTH_TOKEN", "ZEN_AUTH_TOKENS_FILE", "ZEN_SERVICE_TOKEN"}

// zenCredentialPrefixes cover the TLS material of zen's gRPC links
// (ZEN_GRPC_TLS_CERT, _KEY, _CA).
var zenCredentialPrefixes = []string{"ZEN_GRPC_TLS_"}

// ZenCredential reports whether name is one of zen's own credential
// variables.
func ZenCredential(name string) bool {
	if slices.Contains(zenCredentials, name) {
		return true
	}
	for _, p := range zenCredentialPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}

// ProviderKey reports whether name holds a model provider's key: zen's
// providers and the CLIs' vendors all name theirs *_API_KEY.
func ProviderKey(name string) bool { return strings.HasSuffix(name, "_API_KEY") }

// providerKeys are the keys zen's router reads; they are secrets even when
// the caller cannot list the environment's names (a test's getenv).
var providerKeys = []string{"GEMINI_API_KEY", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY", "XAI_API_KEY",
	"DIAL_API_KEY", "CUSTOM_API_KEY", "OPENROUTER_API_KEY"}

// Load collects zen's configured secret values through getenv: the bearer
// tokens (ZEN_AUTH_TOKEN and those in ZEN_AUTH_TOKENS_FILE), the service
// token (ZEN_SERVICE_TOKEN), every provider key (*_API_KEY, among the
// known ones and names, the variables set in the process and its .env),
// the password in REDIS_URL and the header values in OTEL_EXPORTER_OTLP_*
// HEADERS. A tokens file that cannot be read adds nothing: the role that
// serves tokens refuses to start over it, and a role that cannot read it
// cannot leak it either.
func Load(getenv config.Getenv, names []string) *Scrubber {
	var values []string
	add := func(v string) { values = append(values, strings.TrimSpace(v)) }
	add(getenv("ZEN_AUTH_TOKEN"))
	add(getenv("ZEN_SERVICE_TOKEN"))
	if getenv("ZEN_AUTH_TOKENS_FILE") != "" {
		// auth owns the file's format; only the tokens are wanted here.
		onlyFile := func(k string) string {
			if k == "ZEN_AUTH_TOKENS_FILE" {
				return getenv(k)
			}
			return ""
		}
		if tokens, err := auth.Load(onlyFile); err == nil {
			for tok := range tokens {
				add(tok)
			}
		}
	}
	for _, name := range append(slices.Clone(providerKeys), names...) {
		if ProviderKey(name) {
			add(getenv(name))
		}
	}
	values = append(values, RedisPasswords(getenv("REDIS_URL"))...)
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		values = append(values, headerValues(getenv(name))...)
	}
	return New(values...)
}

// RedisPasswords are the passwords a REDIS_URL carries, as written and
// decoded: its own, between the user's name and the last "@" (read by
// hand, so that a URL that does not parse still gives it up), and a
// Sentinel's or a node's in its query (password=, sentinel_password=).
func RedisPasswords(raw string) []string {
	var out []string
	add := func(v string) {
		out = append(out, v)
		if dec, err := url.PathUnescape(v); err == nil && dec != v {
			out = append(out, dec)
		}
	}
	_, after, _ := strings.Cut(strings.TrimSpace(raw), "://")
	password := func(userinfo string) {
		if _, pw, ok := strings.Cut(userinfo, ":"); ok {
			add(pw)
		}
	}
	// As a parser reads it: the query from the first "?", the credentials
	// up to the last "@" before it.
	head, query, _ := strings.Cut(after, "?")
	if at := strings.LastIndex(head, "@"); at >= 0 {
		password(head[:at])
	} else if at := strings.LastIndex(after, "@"); at >= 0 {
		// None there: a password holding "?" (or "#", "/") unencoded, which
		// a parser takes for the query's start, ends at the last "@". Read
		// both ways, as an "@" in the query reads so too: a secret too many
		// is scrubbed for nothing, one too few is leaked.
		password(after[:at])
	}
	for _, kv := range strings.Split(query, "&") {
		if k, v, ok := strings.Cut(kv, "="); ok && (k == "password" || k == "sentinel_password") {
			add(v)
		}
	}
	return out
}

// headerValues reads OTLP's "key=value,key=value" list (values
// URL-encoded) and keeps the values of credential headers (authorization,
// and names with key, token, secret or password): a plain header such as
// x-team=production must not turn an ordinary word into "[redacted]"
// everywhere. Each word counts too, so the token in "Bearer <token>" is
// scrubbed wherever it appears alone.
func headerValues(list string) []string {
	var out []string
	for _, pair := range strings.Split(list, ",") {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || !credentialHeader(k) {
			continue
		}
		if dec, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
			v = dec
		}
		out = append(out, v)
		out = append(out, strings.Fields(v)...)
	}
	return out
}

func credentialHeader(name string) bool {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "authorization" || name == "proxy-authorization" || name == "cookie" {
		return true
	}
	for _, part := range []string{"key", "token", "secret", "password", "auth"} {
		if strings.Contains(name, part) {
			return true
		}
	}
	return false
}
