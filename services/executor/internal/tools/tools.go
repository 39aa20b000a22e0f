package tools

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/executor/internal/clink"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/secrets"
	"google.golang.org/protobuf/types/known/structpb"
)

// Categories steer auto mode.
const (
	ExtendedReasoning = "EXTENDED_REASONING"
	FastResponse      = "FAST_RESPONSE"
	Balanced          = "BALANCED"
)

// Env is what tools need from outside: the router and build facts.
type Env struct {
	Router routerv1.RouterServiceClient
	// CLIs are the command-line agents clink can run.
	CLIs *clink.Registry
	// Secrets are scrubbed from what a CLI printed before it is cut to size.
	Secrets *secrets.Scrubber
	// Disabled are the tools DISABLED_TOOLS turned off.
	Disabled map[string]bool
	// ThinkdeepThinking is thinkdeep's default thinking mode.
	ThinkdeepThinking string
	Locale            string
	Version           string
	Commit            string
	// LastUpdated is the date of the commit the binary was built from.
	LastUpdated string
}

// Call is one invocation, as the edge prepared it.
type Call struct {
	Args           map[string]any
	Model          *routerv1.Model // nil for tools that need none
	ModelRequested string
	Conversation   *executorv1.Conversation // nil for a new conversation
	Files          []*executorv1.FileContent
	// Skipped are the files the call named that the edge left out.
	Skipped []*executorv1.SkippedFile
	Images  []string // data URLs
	// ImageRefs name each of Images (a path, or the data URL itself), when
	// the edge set them.
	ImageRefs      []string
	RemainingTurns int
	// WorkflowState is what this tool stored with its last step in the
	// thread, if any.
	WorkflowState *structpb.Struct
	// Progress reports what the call is doing; outputTokens counts the
	// reply so far.
	Progress func(msg string, outputTokens int64)
	// usage adds up what the call's model calls used (see Usage).
	usage usage
}

// Catalog is what schemas describe about the models on offer.
type Catalog struct {
	AutoMode     bool
	DefaultModel string
	Ranked       []*routerv1.Model // configured models, best first
	// CLIs and CLIRoles are clink's choices.
	CLIs, CLIRoles []string
}

// Tool is one MCP tool.
type Tool struct {
	Name          string
	Title         string
	Description   string
	Category      string
	ReadOnly      bool
	RequiresModel bool
	// Workflow tools take steps; their errors are <tool>_failed payloads.
	Workflow bool
	// FilesArgument names the argument whose files the edge reads, and
	// FilesOnFinalStep limits that to the final step.
	FilesArgument    string
	FilesOnFinalStep bool
	Schema           func(Catalog) *jsonschema.Schema
	// Output is the JSON Schema of the result object.
	Output *jsonschema.Schema
	Run    func(ctx context.Context, env *Env, c *Call) (*executorv1.ToolResult, error)
}

// All returns every tool in the order clients list them: the reference's
// order, with the utilities last.
func All() []Tool { return slices.Clone(catalogue()) }

// catalogue builds the tools once: every call looks its tool up here, and
// the tools are never changed after they are built.
var catalogue = sync.OnceValue(func() []Tool {
	return []Tool{
		chatTool(), clinkTool(), thinkdeepSpec().tool(), plannerTool(), consensusTool(), codereviewSpec().tool(),
		precommitSpec().tool(), debugSpec().tool(), secauditSpec().tool(), docgenTool(), analyzeSpec().tool(),
		refactorSpec().tool(), tracerTool(), testgenSpec().tool(), challengeTool(), apilookupTool(), listModelsTool(),
		versionTool(),
	}
})

// Essential tools cannot be disabled.
var essential = []string{"listmodels", "version"}

// Disable reads DISABLED_TOOLS: names are case-insensitive; unknown names
// and the essential tools are ignored with a warning.
func Disable(names []string, logger *slog.Logger) map[string]bool {
	out := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		switch _, known := Find(n, nil); {
		case n == "":
		case slices.Contains(essential, n):
			logger.Warn("DISABLED_TOOLS: this tool cannot be disabled; ignored", "tool", n)
		case !known:
			logger.Warn("DISABLED_TOOLS: no such tool; ignored", "tool", n)
		default:
			out[n] = true
		}
	}
	return out
}

// Enabled lists the tools on offer, in order.
func Enabled(disabled map[string]bool) []Tool {
	return slices.DeleteFunc(All(), func(t Tool) bool { return disabled[t.Name] })
}

// Find returns the named tool, unless it is disabled.
func Find(name string, disabled map[string]bool) (Tool, bool) {
	if disabled[name] {
		return Tool{}, false
	}
	all := catalogue()
	i := slices.IndexFunc(all, func(t Tool) bool { return t.Name == name })
	if i < 0 {
		return Tool{}, false
	}
	return all[i], true
}

// NewCatalog ranks the configured models of a ListModels answer.
func NewCatalog(resp *routerv1.ListModelsResponse) Catalog {
	var ranked []*routerv1.Model
	for _, m := range resp.GetModels() {
		if m.GetConfigured() {
			ranked = append(ranked, m)
		}
	}
	slices.SortStableFunc(ranked, func(a, b *routerv1.Model) int { return int(b.GetRank() - a.GetRank()) })
	return Catalog{AutoMode: resp.GetAutoMode(), DefaultModel: resp.GetDefaultModel(), Ranked: ranked}
}

// Proto describes the tool for ListTools.
func (t Tool) Proto(c Catalog) (*executorv1.Tool, error) {
	schema, err := wire(t.Schema(c))
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", t.Name, err)
	}
	tool := &executorv1.Tool{
		Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: schema, ReadOnly: t.ReadOnly,
		Category: t.Category, RequiresModel: t.RequiresModel, Workflow: t.Workflow, FilesArgument: t.FilesArgument,
		FilesOnFinalStep: t.FilesOnFinalStep,
	}
	if t.Output != nil {
		if tool.OutputSchema, err = wire(t.Output); err != nil {
			return nil, fmt.Errorf("output schema of %s: %w", t.Name, err)
		}
	}
	return tool, nil
}

// payload builds the result object a client receives.
func payload(m map[string]any) *structpb.Struct {
	s, err := structpb.NewStruct(m)
	if err != nil {
		// Every payload is built from strings, numbers, bools and maps of
		// them, which always convert.
		panic(fmt.Sprintf("tools: payload does not convert: %v", err))
	}
	return s
}

// errorResult is a tool error the agent can act on (reply.Error), with
// metadata of the tool's own.
func errorResult(tool, msg string, meta map[string]any) *executorv1.ToolResult {
	r := reply.Error(tool, msg)
	if meta != nil {
		r.With(meta)
	}
	return &executorv1.ToolResult{IsError: true, Reply: r.Encode()}
}
