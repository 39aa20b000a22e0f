package clink

import (
	"slices"
	"strings"

	"github.com/zenmcp/zen/services/platform/secrets"
)

// runEnv names what any program needs to run: where to find programs and
// its home (where each CLI keeps its login), who it runs as, its locale,
// terminal and time zone, and its temporary directory.
var runEnv = []string{"PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TERM", "TZ", "TMPDIR"}

// runEnvPrefixes are families of the same kind: locale categories and the
// XDG base directories (config, cache, data, state, runtime).
var runEnvPrefixes = []string{"LC_", "XDG_"}

// networkEnv lets a CLI reach its vendor's API where zen's host does so
// through a proxy or a TLS-inspecting gateway; without them the CLIs fail
// there. A proxy's credentials are the user's network settings, not zen's.
var networkEnv = []string{
	"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "no_proxy", "all_proxy",
	"SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
}

// Environment is the environment c runs with, taken from environ (zen's,
// as os.Environ lists it): an allow-list of what any program needs to run
// and reach the network, plus the variables c.PassEnv names, then c.Env's
// values over them. Nothing else of zen's passes: not its tokens, nor the
// keys of providers the CLI does not use. zen's own credentials never
// pass, even if a configuration names them. The result is sorted.
func Environment(c Client, environ []string) []string {
	vars := map[string]string{}
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && passes(c, k) {
			vars[k] = v
		}
	}
	for k, v := range c.Env {
		vars[k] = v
	}
	out := make([]string, 0, len(vars))
	for k, v := range vars {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

func passes(c Client, name string) bool {
	if secrets.ZenCredential(name) {
		return false
	}
	if slices.Contains(runEnv, name) || slices.Contains(networkEnv, name) || slices.Contains(c.PassEnv, name) {
		return true
	}
	for _, p := range runEnvPrefixes {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	return false
}
