package call

import (
	"fmt"
	"path/filepath"
	"strings"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/tokens"
)

// DefaultPromptLimit is the input limit when MAX_MCP_OUTPUT_TOKENS is not
// set: what 25,000 tokens allow, as the reference computes it.
const DefaultPromptLimit = 60_000

// PromptLimit derives the input limit from the client's output budget:
// 60% of it for the prompt, at 4 characters a token.
func PromptLimit(maxOutputTokens int) int {
	if maxOutputTokens <= 0 {
		return DefaultPromptLimit
	}
	return int(float64(maxOutputTokens)*0.6) * 4
}

// promptFields are the user-written text fields the limit applies to:
// simple tools' prompt and workflow tools' step.
var promptFields = []string{"prompt", "step"}

// checkPromptSize answers resend_prompt when user-written text is over the
// limit: the agent then saves it as prompt.txt and sends its path instead,
// so the text never has to fit in one MCP message. A prompt is held to it
// only by a tool that takes files, as the reference holds chat's and
// clink's: challenge and apilookup could not take the file they would be
// asked for.
func checkPromptSize(t *Tool, args map[string]any, limit int) *Outcome {
	tool := t.GetName()
	for _, field := range promptFields {
		text, _ := args[field].(string)
		if len(text) <= limit || field == "prompt" && !t.declares("absolute_file_paths") {
			continue
		}
		if field == "step" {
			return resendPrompt(tool, fmt.Sprintf("Step instructions are too long (%d characters, the limit is %d). Use "+
				"shorter instructions and pass detailed context through file paths instead.", len(text), limit),
				map[string]any{"prompt_size": len(text), "limit": limit})
		}
		instructions := fmt.Sprintf("Save the prompt, exactly as it is, to a file named prompt.txt in the working directory, "+
			"then call %s again with that file's absolute path in absolute_file_paths and an empty or one-line prompt. "+
			"zen reads prompt.txt as the prompt.", tool)
		return resendPrompt(tool, fmt.Sprintf("The prompt is too large for MCP's limits (%d characters, the limit is %d). %s",
			len(text), limit, instructions), map[string]any{"prompt_size": len(text), "limit": limit,
			"instructions": instructions})
	}
	return nil
}

// resendPrompt asks the agent to send its text another way.
func resendPrompt(tool, msg string, meta map[string]any) *Outcome {
	r := &reply.Reply{Status: "resend_prompt", Content: msg, ContentType: reply.Text,
		Metadata: reply.Metadata{ToolName: tool}}
	return &Outcome{IsError: true, Reply: r.With(meta)}
}

// takePromptFile reads a prompt.txt among absolute_file_paths as the prompt
// (before any brief prompt the call also gave) and removes it from the
// files, so it is never embedded a second time.
func takePromptFile(pol files.Policy, args map[string]any) error {
	paths := stringList(args["absolute_file_paths"])
	var rest []any
	for _, p := range paths {
		if filepath.Base(p) != "prompt.txt" {
			rest = append(rest, p)
			continue
		}
		f, err := pol.Read(p)
		if err != nil {
			return err
		}
		prompt := strings.TrimSpace(f.Content)
		if brief, _ := args["prompt"].(string); strings.TrimSpace(brief) != "" {
			prompt += "\n\n" + brief
		}
		args["prompt"] = prompt
	}
	if len(rest) != len(paths) {
		if len(rest) == 0 {
			delete(args, "absolute_file_paths")
		} else {
			args["absolute_file_paths"] = rest
		}
	}
	return nil
}

// fileThreshold is the share of the file budget the reference lets one
// call's files take, by model size.
func fileThreshold(contextWindow int32) float64 {
	switch {
	case contextWindow >= 1_000_000:
		return 0.8
	case contextWindow >= 500_000:
		return 0.7
	}
	return 0.6
}

// fileLimit is the most tokens one call's files may take: the model's file
// budget times the threshold.
func fileLimit(model *routerv1.Model) int64 {
	window := model.GetContextWindow()
	if window == 0 {
		window = noModelWindow
	}
	return int64(float64(tokens.ForContext(int64(window)).Files) * fileThreshold(window))
}

// checkCodeSize refuses, all or nothing, files whose estimated tokens pass
// fileLimit.
func checkCodeSize(tool string, model *routerv1.Model, read []files.File) *Outcome {
	var total int64
	for _, f := range read {
		total += f.Tokens()
	}
	if total <= fileLimit(model) {
		return nil
	}
	return codeTooLarge(tool, model, total, len(read))
}

// codeTooLarge is the reference's refusal of files estimated at total
// tokens.
func codeTooLarge(tool string, model *routerv1.Model, total int64, count int) *Outcome {
	window := model.GetContextWindow()
	if window == 0 {
		window = noModelWindow
	}
	threshold, limit := fileThreshold(window), fileLimit(model)
	instructions := fmt.Sprintf("Send fewer or smaller files (about %d tokens fit for %s), split the work over several calls, "+
		"or pick a model with a larger context window.", limit, model.GetName())
	r := &reply.Reply{Status: "code_too_large", ContentType: reply.Text, Metadata: reply.Metadata{ToolName: tool},
		Content: fmt.Sprintf("The files are too large for %s: about %d tokens against a limit of %d. %s", model.GetName(),
			total, limit, instructions)}
	return &Outcome{IsError: true, Reply: r.With(map[string]any{
		"total_estimated_tokens": total, "limit": limit, "file_count": count,
		"threshold_percent": int(threshold * 100), "model_context_window": model.GetContextWindow(),
		"model_name": model.GetName(), "instructions": instructions,
	})}
}
