package clink

import (
	"embed"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/zenmcp/zen/services/platform/secrets"
)

// DefaultTimeout bounds a CLI run when its configuration does not.
const DefaultTimeout = 30 * time.Minute

// Client is one configured CLI.
type Client struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	// SandboxArgs set how much the CLI may do without asking (its approval
	// and sandbox mode). They are apart from AdditionalArgs so a
	// configuration can tighten them (or drop them with []) and keep the
	// rest; the built-ins' are documented in the README.
	SandboxArgs    []string `json:"sandbox_args"`
	AdditionalArgs []string `json:"additional_args"`
	// PassEnv names the variables of zen's environment the CLI gets beyond
	// what any program needs to run (see Environment): its own
	// credentials. zen's own credentials cannot be named.
	PassEnv []string `json:"pass_env"`
	// Env sets variables for the CLI, over everything else.
	Env            map[string]string `json:"env"`
	TimeoutSeconds int               `json:"timeout_seconds"`
	WorkingDir     string            `json:"working_dir"`
	Roles          map[string]Role   `json:"roles"`
	// Parser reads the CLI's output; it defaults by name (gemini_json,
	// codex_jsonl, claude_json).
	Parser string `json:"parser"`
}

// Role is a system prompt and extra arguments for one kind of request.
type Role struct {
	// PromptPath is a file, or the name of one of zen's embedded prompts.
	PromptPath  string   `json:"prompt_path"`
	RoleArgs    []string `json:"role_args"`
	Description string   `json:"description"`
}

// Timeout is how long a run may take.
func (c Client) Timeout() time.Duration {
	if c.TimeoutSeconds > 0 {
		return time.Duration(c.TimeoutSeconds) * time.Second
	}
	return DefaultTimeout
}

// RoleNames lists the roles, sorted.
func (c Client) RoleNames() []string { return slices.Sorted(maps.Keys(c.Roles)) }

//go:embed builtin/*.json
var builtin embed.FS

// Registry is the set of configured CLIs.
type Registry struct {
	clients map[string]Client
}

// Load reads the built-in configurations, then those in extraPath (a file
// or a directory of .json files, CLI_CLIENTS_CONFIG_PATH), then those in
// userDir (~/.zen/cli_clients); later ones override earlier ones field by
// field.
func Load(extraPath, userDir string) (*Registry, error) {
	r := &Registry{clients: map[string]Client{}}
	entries, _ := builtin.ReadDir("builtin")
	for _, e := range entries {
		raw, _ := builtin.ReadFile("builtin/" + e.Name())
		if err := r.add(raw, "built-in "+e.Name()); err != nil {
			return nil, err
		}
	}
	for _, src := range []struct {
		path     string
		required bool
	}{{extraPath, true}, {userDir, false}} {
		if src.path == "" {
			continue
		}
		files, err := jsonFiles(src.path)
		if err != nil {
			if !src.required && os.IsNotExist(err) {
				continue
			}
			return nil, fmt.Errorf("clink configuration %s: %w", src.path, err)
		}
		for _, f := range files {
			raw, err := os.ReadFile(f)
			if err != nil {
				return nil, fmt.Errorf("clink configuration: %w", err)
			}
			if err := r.add(raw, f); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

func jsonFiles(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	return filepath.Glob(filepath.Join(path, "*.json"))
}

func (r *Registry) add(raw []byte, source string) error {
	var c Client
	dec := json.NewDecoder(strings.NewReader(string(raw)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return fmt.Errorf("clink configuration %s: %w", source, err)
	}
	c.Name = strings.ToLower(strings.TrimSpace(c.Name))
	if c.Name == "" {
		return fmt.Errorf("clink configuration %s: \"name\" is required", source)
	}
	base, ok := r.clients[c.Name]
	if !ok {
		if c.Command == "" {
			return fmt.Errorf("clink configuration %s: client %q needs a \"command\"", source, c.Name)
		}
		base = Client{Name: c.Name, Roles: map[string]Role{}}
	}
	if c.Command != "" {
		base.Command = c.Command
	}
	if c.SandboxArgs != nil {
		base.SandboxArgs = c.SandboxArgs
	}
	if c.AdditionalArgs != nil {
		base.AdditionalArgs = c.AdditionalArgs
	}
	if c.PassEnv != nil {
		base.PassEnv = c.PassEnv
	}
	if c.Env != nil {
		base.Env = c.Env
	}
	if c.TimeoutSeconds != 0 {
		base.TimeoutSeconds = c.TimeoutSeconds
	}
	if c.WorkingDir != "" {
		base.WorkingDir = c.WorkingDir
	}
	if c.Parser != "" {
		base.Parser = c.Parser
	}
	maps.Copy(base.Roles, c.Roles)
	if len(base.Roles) == 0 {
		base.Roles["default"] = Role{PromptPath: "clink_default"}
	}
	if _, err := parserFor(base); err != nil {
		return fmt.Errorf("clink configuration %s: %w", source, err)
	}
	for _, name := range base.PassEnv {
		if secrets.ZenCredential(name) {
			return fmt.Errorf("clink configuration %s: client %q: pass_env names %s, one of zen's own credentials, "+
				"which no CLI is given", source, c.Name, name)
		}
	}
	r.clients[c.Name] = base
	return nil
}

// Names lists the configured CLIs, sorted.
func (r *Registry) Names() []string { return slices.Sorted(maps.Keys(r.clients)) }

// Get returns the named CLI.
func (r *Registry) Get(name string) (Client, bool) {
	c, ok := r.clients[strings.ToLower(strings.TrimSpace(name))]
	return c, ok
}

// Roles lists every role any CLI offers, sorted.
func (r *Registry) Roles() []string {
	set := map[string]bool{}
	for _, c := range r.clients {
		for name := range c.Roles {
			set[name] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}
