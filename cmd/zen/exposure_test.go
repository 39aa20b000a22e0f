package main

import (
	"strings"
	"testing"
)

// TestAServerWithoutTokensSaysWhoMayCallIt: with no client token, zen's
// loopback ports take calls from every user and process of the machine,
// which then read files under the home and spend the keys; nothing said
// so. The start-up log does now, and names the setting; with a token it
// says nothing.
func TestAServerWithoutTokensSaysWhoMayCallIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		env  map[string]string
		warn bool
	}{
		{"no token", map[string]string{}, true},
		{"a token", map[string]string{"ZEN_AUTH_TOKEN": "a-token-of-thirty-two-characters-x"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.env["CUSTOM_API_URL"] = "http://127.0.0.1:1/v1"
			p := startZen(t, tc.env, []string{"mcp", "gateway"}, serveArgs()...)
			log := p.logText()
			if says := strings.Contains(log, "every user and process of this machine"); says != tc.warn ||
				says && !strings.Contains(log, "ZEN_AUTH_TOKEN") {
				t.Errorf("the start-up log warns of open ports: %v, want %v:\n%s", says, tc.warn, log)
			}
		})
	}
}
