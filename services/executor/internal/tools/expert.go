package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/executor/internal/prompts"
	"github.com/zenmcp/zen/services/executor/internal/render"
	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/turnmeta"
	"google.golang.org/grpc/status"
)

// promotedStatuses are the expert answers that stop the workflow to ask
// the agent for something; they become the response's status.
var promotedStatuses = []string{"files_required_to_continue", "investigation_paused", "refactoring_paused"}

// expertStep consults the model on the final step: the agent's
// investigation, the earlier conversation from other tools, and the files,
// each once and with line numbers.
func expertStep(ctx context.Context, env *Env, c *Call, w workflowSpec, st *workflowState, a *workflowArgs,
	resp map[string]any) (*executorv1.ToolResult, error) {
	files := filesOnce(c)
	system := prompts.System(w.name, env.Locale)
	user := expertPrompt(c, w, a, st, files)
	if w.embedFiles {
		// These tools put their instructions beside the code they judge.
		user, system = system+"\n\n"+user, ""
	}
	g := generation{model: c.Model, system: system, user: user, images: st.imagesOf(c), temperature: defaultTemperature,
		thinkingMode: w.defaultThinking, label: w.name + " expert analysis"}
	if a.Temperature != nil {
		g.temperature = *a.Temperature
	}
	if w.name == "thinkdeep" && env.ThinkdeepThinking != "" {
		g.thinkingMode = env.ThinkdeepThinking
	}
	if m := a.ThinkingMode; m != "" {
		g.thinkingMode = m
	}
	if g.thinkingMode == "" {
		g.thinkingMode = "high"
	}
	done, err := run(ctx, env, c, g)
	if err != nil {
		if stop := aborted(ctx, err); stop != nil {
			return nil, stop
		}
		// The steps so far stay in the thread; the agent can send the final
		// step again.
		r := reply.Error(w.name, fmt.Sprintf("The expert analysis failed: %s. The investigation is kept; call %s "+
			"again with the same final step to retry, or set use_assistant_model to false.",
			status.Convert(err).Message(), w.name))
		r.Metadata, r.StepNumber = *workflowMeta(w.name, c), &a.StepNumber
		return &executorv1.ToolResult{IsError: true, Reply: r.Encode()}, nil
	}
	text := done.GetContent()
	analysis := parseExpert(text)
	resp["status"] = "calling_expert_analysis"
	resp["expert_analysis"] = analysis
	resp["file_context"] = map[string]any{"type": "fully_embedded", "files_embedded": len(files),
		"context_optimization": "Each relevant file was sent once, with line numbers."}
	resp["metadata"].(*reply.Metadata).SetModel(done.GetModelName(), done.GetProvider(), c.ModelRequested)
	if s, _ := analysis["status"].(string); slices.Contains(promotedStatuses, s) {
		resp["status"] = s
		resp["content"] = text
		resp["next_steps"] = "Provide the requested files and continue the analysis."
	} else {
		resp["next_steps"] = fmt.Sprintf("%s IS COMPLETE. You MUST now summarize the result for the user: combine your "+
			"own findings with the expert analysis above, check each of the expert's points against the code before you "+
			"repeat it, and say plainly where you disagree and why.", strings.ToUpper(w.name))
		resp["important_considerations"] = w.considerations
	}
	turn := &memoryv1.Turn{Role: memoryv1.Role_ROLE_ASSISTANT, Content: text, ToolName: w.name, ModelName: done.GetModelName(),
		ModelProvider: done.GetProvider(), ModelMetadata: turnmeta.PutUsage(nil, usageMeta(done))}
	return w.result(c, st, resp, a.stepArgs, turn), nil
}

// expertPrompt lays out what the expert reads.
func expertPrompt(c *Call, w workflowSpec, a *workflowArgs, st *workflowState, files []*executorv1.FileContent) string {
	var b strings.Builder
	b.WriteString("=== REQUEST ===\n")
	b.WriteString(st.InitialRequest + "\n")
	if w.brief != nil {
		if extra := w.brief(a); extra != "" {
			b.WriteString(extra + "\n")
		}
	}
	b.WriteString("=== END REQUEST ===\n\n=== AGENT'S INVESTIGATION ===\n")
	b.WriteString(workSummary(st, w.name))
	if conf := st.Confidence; conf == "almost_certain" {
		b.WriteString("The agent is almost certain of its conclusion; confirm or refute it with evidence.\n")
	}
	for _, h := range st.Hypotheses {
		fmt.Fprintf(&b, "Hypothesis at step %v (%v): %v\n", h["step"], h["confidence"], h["hypothesis"])
	}
	if len(st.Issues) > 0 {
		issues, _ := json.Marshal(st.Issues)
		b.WriteString("Issues found so far: " + string(issues) + "\n")
	}
	if len(st.Images) > 0 {
		b.WriteString("Images shared: " + strings.Join(imageNames(st.Images), ", ") + "\n")
	}
	b.WriteString("=== END INVESTIGATION ===\n")
	if earlier := otherToolTurns(c, w.name); len(earlier) > 0 {
		b.WriteString("\n=== EARLIER CONVERSATION IN THIS THREAD ===\n")
		b.WriteString(render.Turns(earlier))
		b.WriteString("=== END EARLIER CONVERSATION ===\n")
	}
	if len(files) > 0 || len(c.Skipped) > 0 {
		header := w.filesHeader
		if header == "" {
			header = "ESSENTIAL FILES"
		}
		fmt.Fprintf(&b, "\n=== %s ===\n%s%s=== END %s ===\n", header, render.Files(files), render.Skipped(c.Skipped),
			header)
	}
	b.WriteString("\nGive your analysis in the format your instructions describe.\n")
	return b.String()
}

// otherToolTurns are the thread's turns from other tools: the conversation
// the workflow continues. Its own steps are in the investigation already.
func otherToolTurns(c *Call, tool string) []*memoryv1.Turn {
	var out []*memoryv1.Turn
	for _, t := range c.Conversation.GetTurns() {
		if t.GetToolName() != tool {
			out = append(out, t)
		}
	}
	return out
}

// parseExpert reads the expert's JSON, fenced or not, and falls back to
// the plain text.
func parseExpert(text string) map[string]any {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return map[string]any{"error": "No response from model", "status": "empty_response"}
	}
	if strings.HasPrefix(trimmed, "```") {
		trimmed = strings.TrimPrefix(trimmed, "```json")
		trimmed = strings.TrimPrefix(trimmed, "```")
		trimmed = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(trimmed), "```"))
	}
	var m map[string]any
	if json.Unmarshal([]byte(trimmed), &m) == nil && m != nil {
		return m
	}
	return map[string]any{"status": "analysis_complete", "raw_analysis": text, "format": "text",
		"note": "Analysis provided in plain text format"}
}

// imageNames are the names of images as a prompt mentions them: a path,
// or, for a data URL (as large as its image), what kind it is.
func imageNames(refs []string) []string {
	out := make([]string, len(refs))
	for i, ref := range refs {
		out[i] = ref
		if rest, ok := strings.CutPrefix(ref, "data:"); ok {
			if mime, _, ok := strings.Cut(rest, ";"); ok {
				out[i] = "an image sent inline (" + mime + ")"
			}
		}
	}
	return out
}
