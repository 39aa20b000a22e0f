package clink

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// zenEnviron is what a shared zen's process environment might hold.
var zenEnviron = []string{
	"PATH=/usr/bin:/bin", "HOME=/home/zen", "USER=zen", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "TERM=xterm",
	"TMPDIR=/tmp/zen", "XDG_CONFIG_HOME=/home/zen/.config", "HTTPS_PROXY=http://proxy:3128", "no_proxy=localhost",
	"ZEN_AUTH_TOKEN=auth-token-0123456789", "ZEN_AUTH_TOKENS_FILE=/etc/zen/tokens", "ZEN_SERVICE_TOKEN=svc-0123456789",
	"ZEN_GRPC_TLS_KEY=/etc/zen/tls.key", "ZEN_MCP_ADDR=0.0.0.0:8080", "REDIS_URL=redis://:pw-0123456789@redis:6379",
	"GEMINI_API_KEY=gemini-key-0123456789", "GOOGLE_CLOUD_PROJECT=proj", "OPENAI_API_KEY=sk-openai-0123456789",
	"ANTHROPIC_API_KEY=sk-ant-0123456789", "XAI_API_KEY=xai-0123456789", "OPENROUTER_API_KEY=or-0123456789",
	"AWS_SECRET_ACCESS_KEY=aws-0123456789", "CUSTOM_TOOL_HOME=/opt/tool", "MALFORMED",
}

// base is what every CLI gets of zenEnviron.
var base = []string{
	"HOME=/home/zen", "HTTPS_PROXY=http://proxy:3128", "LANG=C.UTF-8", "LC_ALL=C.UTF-8", "PATH=/usr/bin:/bin",
	"TERM=xterm", "TMPDIR=/tmp/zen", "USER=zen", "XDG_CONFIG_HOME=/home/zen/.config", "no_proxy=localhost",
}

func TestEnvironmentIsAnAllowList(t *testing.T) {
	t.Parallel()
	r, err := Load("", "")
	if err != nil {
		t.Fatal(err)
	}
	builtin := func(name string) Client {
		c, _ := r.Get(name)
		return c
	}
	for _, c := range []struct {
		name   string
		client Client
		want   []string
	}{
		{"gemini gets its own key only", builtin("gemini"),
			append(clone(base), "GEMINI_API_KEY=gemini-key-0123456789", "GOOGLE_CLOUD_PROJECT=proj")},
		{"codex gets OpenAI's key only", builtin("codex"), append(clone(base), "OPENAI_API_KEY=sk-openai-0123456789")},
		{"claude gets Anthropic's key only", builtin("claude"),
			append(clone(base), "ANTHROPIC_API_KEY=sk-ant-0123456789")},
		{"a configured CLI gets the base", Client{Name: "mine", Command: "mine"}, clone(base)},
		{"pass_env adds the names it lists",
			Client{Name: "mine", PassEnv: []string{"CUSTOM_TOOL_HOME", "XAI_API_KEY", "UNSET"}},
			append(clone(base), "CUSTOM_TOOL_HOME=/opt/tool", "XAI_API_KEY=xai-0123456789")},
		{"zen's credentials never pass", Client{Name: "mine", PassEnv: []string{"ZEN_AUTH_TOKEN", "ZEN_SERVICE_TOKEN",
			"ZEN_AUTH_TOKENS_FILE", "ZEN_GRPC_TLS_KEY"}}, clone(base)},
		{"env sets values over the rest",
			Client{Name: "mine", Env: map[string]string{"TERM": "dumb", "MODE": "review"}},
			replace(append(clone(base), "MODE=review"), "TERM=xterm", "TERM=dumb")},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := Environment(c.client, zenEnviron)
			if diff := cmp.Diff(sorted(c.want), got); diff != "" {
				t.Errorf("environment (-want +got):\n%s", diff)
			}
		})
	}
}

func TestArgsPutSandboxFlagsFirst(t *testing.T) {
	t.Parallel()
	c := Client{
		Name:           "codex",
		Command:        "codex",
		SandboxArgs:    []string{"--sandbox", "read-only"},
		AdditionalArgs: []string{"--json"},
	}
	got := Args(c, Role{RoleArgs: []string{"-c", "x"}}, "")
	want := []string{"codex", "exec", "--sandbox", "read-only", "--json", "-c", "x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("args (-want +got):\n%s", diff)
	}
}

func clone(s []string) []string { return append([]string(nil), s...) }

func replace(s []string, old, new string) []string {
	for i, v := range s {
		if v == old {
			s[i] = new
		}
	}
	return s
}

func sorted(s []string) []string {
	out := clone(s)
	slices.Sort(out)
	return out
}
