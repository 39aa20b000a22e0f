package tools

import (
	"context"
	"maps"
	"regexp"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/executor/internal/prompts"
	"github.com/zenmcp/zen/services/executor/internal/render"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/turnmeta"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// defaultTemperature is what every reference tool default resolves to.
const defaultTemperature = 1.0

var thinkingModes = []string{"minimal", "low", "medium", "high", "max"}

func chatTool() Tool {
	return Tool{
		Name:  "chat",
		Title: "Chat with another model",
		Description: "Think with another model: brainstorm, second opinions, explanations. Paths absolute. Pass a " +
			"reply's continuation_id back to continue that conversation, here or in any tool.",
		Category: FastResponse,
		// chat may write zen_generated.code into the working directory.
		ReadOnly:      false,
		RequiresModel: true,
		FilesArgument: "absolute_file_paths",
		Schema: func(c Catalog) *jsonschema.Schema {
			props := map[string]*jsonschema.Schema{
				"prompt":                          str("Your question, with the context the model needs."),
				"absolute_file_paths":             strList("Files or directories to read."),
				"images":                          strList("Paths or data:image URLs."),
				"working_directory_absolute_path": str("An existing directory: the project."),
				"continuation_id":                 str(""),
			}
			maps.Copy(props, modelSettings(c))
			return object(props, "prompt", "working_directory_absolute_path")
		},
		Output: envelopeSchema(),
		Run:    runChat,
	}
}

func runChat(ctx context.Context, env *Env, c *Call) (*executorv1.ToolResult, error) {
	var a chatArgs
	if err := decodeArgs("chat", c.Args, &a); err != nil {
		return errorResult("chat", err.Error(), nil), nil
	}
	prompt := a.Prompt
	if strings.TrimSpace(prompt) == "" {
		return errorResult("chat", "Error in chat: prompt is required and must not be empty.", nil), nil
	}
	if c.Model == nil {
		return errorResult("chat", "Error in chat: no model was resolved for this call.", nil), nil
	}
	user := chatUserMessage(prompt, c)
	system := prompts.System("chat", env.Locale)
	if c.Model.GetAllowCodeGeneration() {
		system += "\n\n" + prompts.Text("generate_code")
	}
	done, err := generate(ctx, env, c, a.modelArgs, system, user, defaultTemperature)
	if err != nil {
		return toolFailure(ctx, "chat", err)
	}
	answer, code := done.GetContent(), ""
	if c.Model.GetAllowCodeGeneration() {
		answer, code = extractGeneratedCode(answer)
	}
	content := answer + "\n\n" + prompts.Text("agent_turn")
	usage := usageMeta(done)
	meta := reply.Metadata{ToolName: "chat", Fields: map[string]any{"conversation_ready": true, "usage": usage}}
	meta.SetModel(done.GetModelName(), done.GetProvider(), c.ModelRequested)
	return &executorv1.ToolResult{
		OffersContinuation: true, GeneratedCode: code,
		Reply: (&reply.Reply{Status: reply.StatusSuccess, Content: content, ContentType: reply.Text,
			Metadata: meta}).Encode(),
		Turns: []*memoryv1.Turn{
			{Role: memoryv1.Role_ROLE_USER, Content: prompt, ToolName: "chat", Files: fileRefs(c.Files), Images: a.Images},
			{Role: memoryv1.Role_ROLE_ASSISTANT, Content: done.GetContent(), ToolName: "chat", ModelName: done.GetModelName(),
				ModelProvider: done.GetProvider(), ModelMetadata: turnmeta.PutUsage(nil, usage)},
		},
		InitialContext: initialContext(c.Args),
	}, nil
}

// chatUserMessage lays out the request: the history (when continuing), the
// new input, files not already in the history, and the closing line.
func chatUserMessage(prompt string, c *Call) string {
	fresh, known := splitKnownFiles(c)
	size := render.HistorySize(c.Conversation) + len(prompt) + render.FilesSize(fresh) + 2048
	for _, p := range known {
		size += len(p) + 3
	}
	var b strings.Builder
	b.Grow(size)
	b.WriteString("=== USER REQUEST ===\n")
	if c.Conversation != nil {
		render.WriteHistory(&b, c.Conversation, c.Files)
		b.WriteString("\n=== NEW USER INPUT ===\n")
		b.WriteString(prompt)
		b.WriteString("\n\n")
		b.WriteString(continuationNote(c, "follow_up"))
	} else {
		b.WriteString(prompt)
	}
	b.WriteString("\n")
	if len(fresh) > 0 || len(c.Skipped) > 0 {
		b.WriteString("\n=== CONTEXT FILES ===\n")
		b.WriteString(render.Files(fresh))
		b.WriteString(render.Skipped(c.Skipped))
	}
	if len(known) > 0 {
		b.WriteString("\n--- NOTE: Files already in the conversation history above ---\nThese files are embedded in the history and were not repeated:\n")
		for _, p := range known {
			b.WriteString("- " + p + "\n")
		}
		b.WriteString("--- END NOTE ---\n")
	}
	b.WriteString("=== END REQUEST ===\n\n")
	b.WriteString(prompts.Text("chat_request_footer"))
	if c.Conversation == nil {
		b.WriteString("\n\n")
		b.WriteString(continuationNote(c, "new_conversation"))
	}
	return b.String()
}

// continuationNote tells the model how many turns the thread holds after
// its answer; with fewer than two (a follow-up and its reply) none is
// offered, so its answer is the last.
func continuationNote(c *Call, name string) string {
	if c.RemainingTurns < 2 {
		return prompts.Text("last_exchange")
	}
	return strings.ReplaceAll(prompts.Text(name), "{turns_left}", reply.TurnsLeft(int(c.RemainingTurns)))
}

// splitKnownFiles separates requested files from those the history already
// embeds with the same contents.
func splitKnownFiles(c *Call) (fresh []*executorv1.FileContent, known []string) {
	inHistory := map[string]string{}
	for _, f := range c.Conversation.GetFiles() {
		inHistory[f.GetPath()] = f.GetSha256()
	}
	for _, f := range c.Files {
		if sum, ok := inHistory[f.GetPath()]; ok && sum == f.GetSha256() {
			known = append(known, f.GetPath())
			continue
		}
		fresh = append(fresh, f)
	}
	return fresh, known
}

func fileRefs(files []*executorv1.FileContent) []*memoryv1.FileRef {
	out := make([]*memoryv1.FileRef, len(files))
	for i, f := range files {
		out[i] = &memoryv1.FileRef{Path: f.GetPath(), Sha256: f.GetSha256(), SizeBytes: f.GetSizeBytes()}
		if t, err := time.Parse(time.RFC3339, f.GetModifiedAt()); err == nil {
			out[i].ModifiedAt = timestamppb.New(t)
		}
	}
	return out
}

// perCallKeys are settings of one call that a thread does not keep.
var perCallKeys = []string{"temperature", "thinking_mode", "model", "continuation_id"}

func initialContext(args map[string]any) *structpb.Struct {
	kept := map[string]any{}
	for k, v := range args {
		kept[k] = v
	}
	for _, k := range perCallKeys {
		delete(kept, k)
	}
	s, err := structpb.NewStruct(kept)
	if err != nil {
		return nil
	}
	return s
}

var generatedBlock = regexp.MustCompile(`(?s)<GENERATED-CODE>(.*?)</GENERATED-CODE>`)

// extractGeneratedCode takes the last <GENERATED-CODE> block out of an
// answer; every block is removed from the text the agent reads.
func extractGeneratedCode(answer string) (string, string) {
	blocks := generatedBlock.FindAllStringSubmatch(answer, -1)
	if len(blocks) == 0 {
		return answer, ""
	}
	code := strings.TrimSpace(blocks[len(blocks)-1][1])
	rest := strings.TrimSpace(generatedBlock.ReplaceAllString(answer, ""))
	return rest, code
}
