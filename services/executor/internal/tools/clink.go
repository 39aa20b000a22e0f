package tools

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/executor/internal/clink"
	"github.com/zenmcp/zen/services/executor/internal/prompts"
	"github.com/zenmcp/zen/services/executor/internal/render"
	"github.com/zenmcp/zen/services/platform/reply"
	"google.golang.org/grpc/status"
)

// maxCLIChars caps what clink returns of a CLI's answer.
const maxCLIChars = 20_000

func clinkTool() Tool {
	return Tool{
		Name: "clink", Title: "Ask another AI CLI",
		Description: "Hand a request to another AI CLI on this machine, in a role; it has its own tools and reads " +
			"the files you list (absolute paths) itself.",
		Category: Balanced, ReadOnly: true, FilesArgument: "absolute_file_paths",
		Schema: func(c Catalog) *jsonschema.Schema {
			props := map[string]*jsonschema.Schema{
				"prompt":              str(""),
				"cli_name":            enum("", c.CLIs...),
				"role":                enum("", c.CLIRoles...),
				"absolute_file_paths": strList(""),
				"images":              strList(""),
				"continuation_id":     str(""),
			}
			req := []string{"prompt"}
			if len(c.CLIs) > 1 {
				req = append(req, "cli_name")
			}
			return object(props, req...)
		},
		Output: envelopeSchema(),
		Run:    runClink,
	}
}

func runClink(ctx context.Context, env *Env, c *Call) (*executorv1.ToolResult, error) {
	if env.CLIs == nil || len(env.CLIs.Names()) == 0 {
		return errorResult("clink", "No CLI is configured for clink.", nil), nil
	}
	var a clinkArgs
	if err := decodeArgs("clink", c.Args, &a); err != nil {
		return errorResult("clink", err.Error(), nil), nil
	}
	name := a.CLIName
	if name == "" {
		name = env.CLIs.Names()[0]
	}
	cli, ok := env.CLIs.Get(name)
	if !ok {
		return errorResult("clink", fmt.Sprintf("Unknown CLI '%s'. Configured: %s.", name, strings.Join(env.CLIs.Names(), ", ")), nil), nil
	}
	roleName := orDefault(a.Role, "default")
	role, ok := cli.Roles[roleName]
	if !ok {
		return errorResult("clink", fmt.Sprintf("CLI '%s' has no role '%s'. Its roles: %s.", cli.Name, roleName, strings.Join(cli.RoleNames(), ", ")), nil), nil
	}
	system, err := rolePrompt(role, env.Locale)
	if err != nil {
		return errorResult("clink", fmt.Sprintf("Role '%s' of CLI '%s': %v", roleName, cli.Name, err), nil), nil
	}
	flagPrompt := ""
	if cli.Name == "claude" {
		flagPrompt = system
	}
	args := clink.Args(cli, role, flagPrompt)
	stdin := clinkPrompt(c, a.Prompt, cli.Name, system, flagPrompt != "")
	if c.Progress != nil {
		c.Progress(fmt.Sprintf("running %s (%s role)", cli.Name, roleName), 0)
	}
	run, err := clink.Execute(ctx, cli, args, stdin, "")
	var notFound *clink.NotFoundError
	switch {
	case errors.As(err, &notFound):
		return errorResult("clink", err.Error(), map[string]any{"cli_name": cli.Name}), nil
	case errors.Is(err, clink.ErrTimeout):
		return errorResult("clink", err.Error(), map[string]any{"cli_name": cli.Name}), nil
	case err != nil && ctx.Err() != nil:
		return nil, status.FromContextError(ctx.Err()).Err()
	case err != nil:
		return errorResult("clink", err.Error(), map[string]any{"cli_name": cli.Name}), nil
	}
	// Before parsing, capping and tailing: a cut through a secret would
	// leave part of it that no later scrub recognises.
	run.Stdout, run.Stderr = env.Secrets.String(run.Stdout), env.Secrets.String(run.Stderr)
	parsed, perr := clink.Parse(cli, run)
	if run.ReturnCode != 0 && (perr != nil || parsed.Content == "") {
		msg := fmt.Sprintf("CLI '%s' exited with status %d", cli.Name, run.ReturnCode)
		if perr != nil && !strings.Contains(perr.Error(), "not the expected") {
			msg += ": " + perr.Error()
		}
		return errorResult("clink", msg, map[string]any{"cli_name": cli.Name, "stderr": tail(run.Stderr, 2000)}), nil
	}
	if perr != nil {
		return errorResult("clink", fmt.Sprintf("CLI '%s' answered in a form zen could not read: %v", cli.Name, perr),
			map[string]any{"cli_name": cli.Name}), nil
	}
	content, capNote := capCLIOutput(parsed.Content)
	c.used(cli.Name, cli.Name, 0, 0) // CLIs report tokens in forms of their own, if at all
	meta := map[string]any{
		"cli_name": cli.Name, "role": roleName, "command": anyList(run.Command),
		"duration_seconds": float64(run.Duration.Round(10*time.Millisecond)) / float64(time.Second), "parser": clink.ParserName(cli),
		"return_code": run.ReturnCode,
	}
	for k, v := range parsed.Metadata {
		meta[k] = v
	}
	if capNote != "" {
		meta[capNote] = true
	}
	if s := strings.TrimSpace(run.Stderr); s != "" {
		meta["stderr"] = tail(s, 2000)
	}
	// The CLI is the provider, and the model unless it names the one that
	// answered (gemini's stats).
	r := (&reply.Reply{Status: reply.StatusSuccess, Content: content, ContentType: reply.Text,
		Metadata: reply.Metadata{ToolName: "clink", ModelUsed: cmp.Or(parsed.Model, cli.Name),
			ProviderUsed: cli.Name}}).With(meta)
	return &executorv1.ToolResult{
		OffersContinuation: true,
		Reply:              r.Encode(),
		Turns: []*memoryv1.Turn{
			{Role: memoryv1.Role_ROLE_USER, Content: a.Prompt, ToolName: "clink", Files: fileRefs(c.Files)},
			{Role: memoryv1.Role_ROLE_ASSISTANT, Content: parsed.Content, ToolName: "clink", ModelName: cli.Name, ModelProvider: cli.Name},
		},
		InitialContext: initialContext(c.Args),
	}, nil
}

// rolePrompt reads a role's system prompt: a file path, or one of zen's
// embedded prompts by name.
func rolePrompt(role clink.Role, locale string) (string, error) {
	p := role.PromptPath
	if p == "" {
		p = "clink_default"
	}
	if strings.ContainsRune(p, os.PathSeparator) {
		raw, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		return strings.TrimSpace(string(raw)), nil
	}
	if !prompts.Has(p) {
		return "", fmt.Errorf("no prompt file or built-in prompt %q", p)
	}
	return prompts.System(p, locale), nil
}

// clinkPrompt is what the CLI reads on stdin: its role (unless passed by
// flag), a note on its tools, the history when continuing, the request and
// the files by reference (the CLI reads them itself).
func clinkPrompt(c *Call, prompt, cli, system string, systemByFlag bool) string {
	var b strings.Builder
	if !systemByFlag {
		b.WriteString(system + "\n\n")
	}
	fmt.Fprintf(&b, "You are running as the %s CLI agent, called through zen by another AI agent. Use your own file "+
		"and search tools to read what you need; the calling agent cannot run them for you.\n\n", cli)
	if c.Conversation != nil {
		b.WriteString(render.History(c.Conversation, c.Files) + "\n")
	}
	b.WriteString("=== USER REQUEST ===\n" + prompt + "\n=== END REQUEST ===\n")
	if len(c.Files) > 0 || len(c.Skipped) > 0 {
		b.WriteString("\n=== FILE REFERENCES ===\n")
		for _, f := range c.Files {
			fmt.Fprintf(&b, "- %s (last modified %s, %d bytes)\n", f.GetPath(), f.GetModifiedAt(), f.GetSizeBytes())
		}
		b.WriteString(render.Skipped(c.Skipped))
		b.WriteString("=== END FILE REFERENCES ===\n")
	}
	return b.String()
}

var summaryBlock = regexp.MustCompile(`(?s)<SUMMARY>(.*?)</SUMMARY>`)

// capCLIOutput keeps an answer within maxCLIChars: its <SUMMARY> when it
// has one, else its start with a notice.
func capCLIOutput(s string) (string, string) {
	if len([]rune(s)) <= maxCLIChars {
		return s, ""
	}
	if m := summaryBlock.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1]), "output_summarized"
	}
	head := []rune(s)[:4000]
	return fmt.Sprintf("The CLI's answer was %d characters, over clink's limit of %d, and had no <SUMMARY> block; "+
		"here are its first 4,000 characters.\n\n%s", len([]rune(s)), maxCLIChars, string(head)), "output_truncated"
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
