package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUserDotEnvFollowsXDG: $XDG_CONFIG_HOME/zen/.env, else
// ~/.config/zen/.env; a relative XDG_CONFIG_HOME is ignored, as the XDG
// specification says.
func TestUserDotEnvFollowsXDG(t *testing.T) {
	t.Parallel()
	got := map[string]string{}
	for name, env := range map[string]map[string]string{
		"xdg":          {"XDG_CONFIG_HOME": "/cfg", "HOME": "/home/ann"},
		"home":         {"HOME": "/home/ann"},
		"relative xdg": {"XDG_CONFIG_HOME": "cfg", "HOME": "/home/ann"},
		"neither":      {},
	} {
		got[name] = userDotEnv(func(k string) string { return env[k] })
	}
	want := map[string]string{"xdg": "/cfg/zen/.env", "home": "/home/ann/.config/zen/.env",
		"relative xdg": "/home/ann/.config/zen/.env", "neither": ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("user .env (-want +got):\n%s", diff)
	}
}
