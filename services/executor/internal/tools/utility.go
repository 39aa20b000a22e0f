package tools

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/reply"
)

func noArgs(Catalog) *jsonschema.Schema { return object(map[string]*jsonschema.Schema{}) }

func listModelsTool() Tool {
	return Tool{
		Name:        "listmodels",
		Title:       "List available models",
		Description: "List the models zen can use, by provider, with aliases and context windows.",
		Category:    FastResponse,
		ReadOnly:    true,
		Schema:      noArgs,
		Output:      envelopeSchema(),
		Run: func(ctx context.Context, env *Env, _ *Call) (*executorv1.ToolResult, error) {
			resp, err := env.Router.ListModels(ctx, &routerv1.ListModelsRequest{})
			if err != nil {
				return toolFailure(ctx, "listmodels", err)
			}
			return &executorv1.ToolResult{Reply: (&reply.Reply{Status: reply.StatusSuccess, Content: modelListing(resp),
				ContentType: "markdown", Metadata: reply.Metadata{ToolName: "listmodels", Fields: map[string]any{
					"configured_providers": len(resp.GetConfiguredProviders()),
				}}}).Encode()}, nil
		},
	}
}

// providerTitles are how listings name providers.
var providerTitles = map[string]string{
	"gemini": "Google Gemini", "openai": "OpenAI", "azure": "Azure OpenAI", "xai": "X.AI", "dial": "DIAL",
	"custom": "Custom (OpenAI-compatible endpoint)", "openrouter": "OpenRouter",
}

// modelListing shows, per provider in priority order, the models that can
// be used now; providers without credentials, and models an allow-list
// leaves out, are counted but not listed.
func modelListing(resp *routerv1.ListModelsResponse) string {
	var b strings.Builder
	b.WriteString("# Available AI Models\n")
	if help := resp.GetSetupHelp(); help != "" {
		// A first contact: say how to add a provider before the list of
		// what one would bring.
		fmt.Fprintf(&b, "\n**Setup needed**: %s.\n", help)
	}
	var order []string
	byProvider := map[string][]*routerv1.Model{}
	for _, m := range resp.GetModels() {
		if _, seen := byProvider[m.GetProvider()]; !seen {
			order = append(order, m.GetProvider())
		}
		byProvider[m.GetProvider()] = append(byProvider[m.GetProvider()], m)
	}
	available := 0
	for _, p := range order {
		models := byProvider[p]
		title := providerTitles[p]
		if title == "" {
			title = p
		}
		if !slices.Contains(resp.GetConfiguredProviders(), p) {
			fmt.Fprintf(&b, "\n## %s ❌\nNot configured: set its credentials to use its %d models.\n", title, len(models))
			continue
		}
		fmt.Fprintf(&b, "\n## %s ✅\n", title)
		hidden := 0
		for _, m := range models {
			if !m.GetConfigured() {
				hidden++
				continue
			}
			available++
			fmt.Fprintf(&b, "- `%s` - %s context, %s output, score %d\n", m.GetName(), tokensShort(m.GetContextWindow()),
				tokensShort(m.GetMaxOutputTokens()), m.GetIntelligenceScore())
			if m.GetDescription() != "" {
				fmt.Fprintf(&b, "  - %s\n", m.GetDescription())
			}
			if len(m.GetAliases()) > 0 {
				fmt.Fprintf(&b, "  - Aliases: %s\n", strings.Join(m.GetAliases(), ", "))
			}
		}
		if hidden > 0 {
			fmt.Fprintf(&b, "- %d more left out by the %s allow-list\n", hidden, title)
		}
	}
	b.WriteString("\n## Summary\n")
	fmt.Fprintf(&b, "**Configured Providers**: %d (%s)\n", len(resp.GetConfiguredProviders()), strings.Join(resp.GetConfiguredProviders(), ", "))
	fmt.Fprintf(&b, "**Total Available Models**: %d\n", available)
	mode := NewCatalog(resp).modelMode()
	fmt.Fprintf(&b, "**Model selection**: %s\n", mode.Rule())
	return b.String()
}

func versionTool() Tool {
	return Tool{
		Name:        "version",
		Title:       "Server version",
		Description: "Show the zen server's version, build and configuration.",
		Category:    FastResponse,
		ReadOnly:    true,
		Schema:      noArgs,
		Output:      envelopeSchema(),
		Run: func(ctx context.Context, env *Env, _ *Call) (*executorv1.ToolResult, error) {
			resp, err := env.Router.ListModels(ctx, &routerv1.ListModelsRequest{ConfiguredOnly: true})
			if err != nil {
				return toolFailure(ctx, "version", err)
			}
			mode := "fixed"
			if resp.GetAutoMode() {
				mode = "auto"
			}
			platform := runtime.GOOS + "/" + runtime.GOARCH
			var b strings.Builder
			b.WriteString("# zen MCP server\n\n")
			fmt.Fprintf(&b, "**Version**: %s\n**Commit**: %s\n**Go**: %s\n**Platform**: %s\n\n", env.Version, env.Commit, runtime.Version(), platform)
			b.WriteString("## Configuration\n")
			fmt.Fprintf(&b, "- Model selection: %s (DEFAULT_MODEL=%s)\n", mode, resp.GetDefaultModel())
			fmt.Fprintf(&b, "- Configured providers: %s\n", strings.Join(resp.GetConfiguredProviders(), ", "))
			fmt.Fprintf(&b, "- Available models: %d\n", len(resp.GetModels()))
			return &executorv1.ToolResult{Reply: (&reply.Reply{Status: reply.StatusSuccess, Content: b.String(),
				ContentType: "markdown", Metadata: reply.Metadata{ToolName: "version", Fields: map[string]any{
					"server_version":       env.Version,
					"commit":               env.Commit,
					"last_updated":         env.LastUpdated,
					"go_version":           runtime.Version(),
					"platform":             platform,
					"model_selection_mode": mode,
					"default_model":        resp.GetDefaultModel(),
				}}}).Encode()}, nil
		},
	}
}
