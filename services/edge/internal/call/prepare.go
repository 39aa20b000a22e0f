package call

import (
	"context"
	"fmt"
	"strings"
	"time"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/edge/internal/files"
	"github.com/zenmcp/zen/services/platform/storedjson"
	"google.golang.org/protobuf/types/known/structpb"
)

// prepare does everything before the executor runs: it either returns the
// request to execute, or an outcome that ends the call without a model.
// It fills learnt with what finish needs: the files left out and the
// turn count memory prepared the call with.
func (r *Runner) prepare(ctx context.Context, tool *Tool, args map[string]any, progress func(string),
	learnt *prepared) (*executorv1.ExecuteToolRequest, *Outcome, error) {
	name := tool.GetName()
	if name == "clink" && !r.files.RunsAgentCLIs() {
		return nil, ptr(toolError(name, "Error: clink is off on this server: it runs an agent CLI with the server's "+
			"own user rights and disk, and this zen is shared ("+r.files.Shared()+"). Run clink from a zen on your "+
			"own machine, or ask the operator to set ZEN_CLINK_ON_SHARED=true if every client may act as zen's user.",
			nil)), nil
	}
	if out := r.checkPaths(name, args, tool.GetWorkflow()); out != nil {
		return nil, out, nil
	}
	if out := checkPromptSize(tool, args, r.promptLimit); out != nil {
		return nil, out, nil
	}
	// prompt.txt is a simple tool's way round the prompt limit.
	if tool.GetFilesArgument() == "absolute_file_paths" {
		if err := takePromptFile(r.files, args); err != nil {
			return nil, ptr(toolError(name, "Error: prompt.txt: "+err.Error(), nil)), nil
		}
	}
	if out := checkModelNames(name, args); out != nil {
		return nil, out, nil
	}
	id, _ := args["continuation_id"].(string)
	if id == "" {
		// Its thread would keep them, and memory would refuse it once the
		// model had run and been paid for.
		if why := storedjson.FitsAThread(args); why != "" {
			return nil, ptr(toolError(name, "Error: the arguments are more than a conversation keeps of its first "+
				"call: "+why+". Name fewer files, or put long text in a file", nil)), nil
		}
	}
	su, out, err := r.setUp(ctx, tool, id, args)
	if err != nil || out != nil {
		return nil, out, err
	}
	req := &executorv1.ExecuteToolRequest{ToolName: name, RemainingTurns: -1, Model: su.model,
		ModelRequested: su.requested, WorkflowState: su.prep.GetWorkflowState()}
	if su.prep != nil {
		// After this exchange's request and reply, as the offer will say.
		req.RemainingTurns = max(0, su.prep.GetRemainingTurns()-2)
		learnt.turnCount = su.prep.GetTurnCount()
		if id != "" {
			if learnt.unkept = unkeptExchange(tool, su.prep); learnt.unkept != "" {
				if next, _ := args["next_step_required"].(bool); tool.GetWorkflow() && next {
					return nil, ptr(fullWorkflow(tool, learnt.unkept)), nil
				}
				req.RemainingTurns = 0 // the model's answer is the conversation's last
			}
		}
	}
	if su.model != nil {
		progress("using " + su.model.GetName())
	}
	paths := stringList(args[tool.GetFilesArgument()])
	if next, _ := args["next_step_required"].(bool); tool.GetFilesOnFinalStep() && next {
		paths = nil // named, not read, until the final step
	}
	var left []files.Skipped
	if finalExpertStep(tool, args) {
		var earlier []string
		earlier, left = r.earlierFiles(su.prep.GetToolFiles())
		paths = append(paths, earlier...)
	}
	if len(paths) > 0 {
		set, out := r.readFiles(name, req.GetModel(), paths, tool.GetWorkflow())
		if out != nil {
			return nil, out, nil
		}
		learnt.omitted = set.omitted
		req.Files, left = toFileContents(set.read), append(set.skipped, left...)
	}
	req.SkippedFiles = skippedFiles(left)
	refs := stringList(args["images"])
	var imageBytes int64
	if len(refs) > 0 {
		set, out := r.readImages(name, req.GetModel(), refs)
		if out != nil {
			return nil, out, nil
		}
		req.Images, req.ImageRefs, imageBytes = set.urls, set.refs, set.bytes
		req.SkippedFiles = append(req.SkippedFiles, skippedFiles(set.skipped)...)
	}
	if finalExpertStep(tool, args) {
		r.addEarlierImages(req, su.prep.GetToolImages(), imageBytes)
	}
	if id != "" {
		conv, err := r.conversation(ctx, id, su.prep, req.GetModel())
		if err != nil {
			return nil, nil, err
		}
		req.Conversation = conv
	}
	s, err := structpb.NewStruct(args)
	if err != nil {
		return nil, ptr(toolError(name, "invalid arguments for "+name+": "+err.Error(), nil)), nil
	}
	req.Arguments = s
	return req, nil, nil
}

func ptr(o Outcome) *Outcome { return &o }

// setup is what a call learns before it reads files: memory's answer (nil
// for a tool that keeps no thread) and the model (nil for a tool that
// resolves none), with the name the caller asked for.
type setup struct {
	prep      *memoryv1.PrepareCallResponse
	model     *routerv1.Model
	requested string
}

// setUp resolves the model and asks memory once. A call that names its
// model, or starts a thread, resolves the model first, so that memory's one
// answer holds the history selected for it; one that inherits the thread's
// model learns which from that answer, which holds the history for it too
// (see conversation). A missing thread is told before an unknown model,
// and before any model is called.
func (r *Runner) setUp(ctx context.Context, tool *Tool, id string, args map[string]any) (setup, *Outcome, error) {
	var su setup
	named, _ := args["model"].(string)
	inherit := id != "" && named == ""
	var modelOut *Outcome
	var err error
	if tool.GetRequiresModel() && !inherit {
		if su.model, su.requested, modelOut, err = r.resolveModel(ctx, tool, args, ""); err != nil {
			return su, nil, err
		}
	}
	if id != "" || tool.keepsThreads() {
		var window *memoryv1.ModelWindow
		if !inherit || !tool.GetRequiresModel() {
			window = modelWindow(su.model)
		}
		var out *Outcome
		if su.prep, out, err = r.prepareMemory(ctx, tool, id, window, id != "" && finalExpertStep(tool, args)); err != nil || out != nil {
			return su, out, err
		}
		if id != "" {
			mergeInitialContext(args, su.prep.GetInitialContext(), tool.declares)
		}
	}
	if modelOut != nil {
		return su, modelOut, nil
	}
	if tool.GetRequiresModel() && inherit {
		su.model, su.requested, modelOut, err = r.resolveModel(ctx, tool, args, su.prep.GetLastModel())
	}
	return su, modelOut, err
}

// pathArgs are the arguments that hold paths. Each must be absolute and
// pass the file policy, even those the edge only names (files_checked,
// path): a refusal at the first step beats one at the last, when the
// files are read.
var pathArgs = []string{"absolute_file_paths", "images", "relevant_files", "files_checked", "style_guide_examples",
	"path"}

// checkPaths enforces absolute paths allowed by the file policy, and a
// working directory zen may write in, before anything is read.
func (r *Runner) checkPaths(tool string, args map[string]any, workflow bool) *Outcome {
	if out := r.checkWorkingDirectory(tool, args); out != nil {
		return out
	}
	for _, key := range pathArgs {
		var paths []string
		list := stringList(args[key])
		if p, ok := args[key].(string); ok && p != "" {
			list = []string{p}
		}
		for _, p := range list {
			if !strings.HasPrefix(p, "data:") {
				paths = append(paths, p)
			}
		}
		if err := files.CheckAbsolute(paths); err != nil {
			if workflow {
				return ptr(toolError(tool, fmt.Sprintf("All file paths must be FULL absolute paths. Invalid path in %s: %s",
					key, err.Error()), nil))
			}
			return ptr(toolError(tool, "Error: "+err.Error()+" (in "+key+")", nil))
		}
		for _, p := range paths {
			// A file that cannot be read is left out when it is read (see
			// readFiles); only the policy's refusals end the call here.
			if _, err := r.files.Resolve(p); err != nil && !files.IsSkipped(err) {
				return ptr(toolError(tool, "Error: "+err.Error()+" (in "+key+")", nil))
			}
		}
	}
	return nil
}

// resolveModel picks the model: the one named, else the thread's last
// assistant model (lastModel), else the default or auto mode's pick.
func (r *Runner) resolveModel(ctx context.Context, tool *Tool, args map[string]any, lastModel string) (*routerv1.Model, string, *Outcome, error) {
	requested, _ := args["model"].(string)
	inherited := ""
	if requested == "" {
		inherited = lastModel
	}
	ask := requested
	if ask == "" {
		ask = inherited
	}
	model, err := r.resolve(ctx, ask, tool.GetCategory())
	if isNotFound(err) && inherited != "" {
		// The thread's model is gone (catalogue or keys changed): let the
		// default or auto mode choose, as the reference does.
		model, err = r.resolve(ctx, "", tool.GetCategory())
	}
	if isNotFound(err) {
		return nil, "", ptr(r.unknownModel(ctx, tool, ask)), nil
	}
	if help, ok := noProvider(err); ok {
		// The router's message says which variables to set, and where.
		return nil, "", ptr(toolError(tool.GetName(), fmt.Sprintf("Error in %s: %s.", tool.GetName(), help), nil)), nil
	}
	if err != nil {
		return nil, "", nil, &BackendError{"router", err}
	}
	if requested == "" {
		requested = model.GetName()
	}
	return model, requested, nil, nil
}

// A router resolves a name for a category alike for as long as it runs:
// its catalogue, restrictions and keys are read when it starts. So the
// edge keeps what it answered for resolutionLasts, and a call that names a
// model it resolved lately asks the router nothing. The bound is how long
// a router restarted with other settings may go unheard: a model no router
// serves any more is still refused, by Generate, but for that long a call
// naming it is told so there rather than offered the models there are, and
// one continuing a thread of it fails rather than falls back to the
// default. Refusals are not kept.
const (
	resolutionLasts = 10 * time.Second
	// maxResolutions bounds the names kept: an alias in other cases is
	// another key.
	maxResolutions = 256
	// maxResolvedName bounds the length of a name kept.
	maxResolvedName = 256
)

// resolution names what was resolved: a model name as asked (the router
// trims it), for a tool category.
type resolution struct{ model, category string }

// resolve is the router's resolution of name for category, or one it gave
// lately. The model returned is shared: it is read, never changed.
func (r *Runner) resolve(ctx context.Context, name, category string) (*routerv1.Model, error) {
	key := resolution{strings.TrimSpace(name), category}
	if m, ok := r.models.get(key); ok {
		return m, nil
	}
	resp, err := r.b.Router.ResolveModel(ctx, &routerv1.ResolveModelRequest{Model: name, Category: category})
	if err != nil {
		return nil, err
	}
	if len(name) <= maxResolvedName {
		r.models.put(key, resp.GetModel())
	}
	return resp.GetModel(), nil
}

// unknownModel is the reference's error: what is available, and a pick.
func (r *Runner) unknownModel(ctx context.Context, tool *Tool, name string) Outcome {
	msg := fmt.Sprintf("Model '%s' is not available with current API keys.", name)
	if list, err := r.b.Router.ListModels(ctx, &routerv1.ListModelsRequest{ConfiguredOnly: true}); err == nil {
		var names []string
		for _, m := range list.GetModels() {
			names = append(names, m.GetName())
			names = append(names, m.GetAliases()...)
		}
		msg += " Available models: " + strings.Join(names, ", ") + "."
	}
	if pick, err := r.b.Router.ResolveModel(ctx, &routerv1.ResolveModelRequest{Model: "auto", Category: tool.GetCategory()}); err == nil {
		msg += fmt.Sprintf(" Suggested model for %s: '%s' (category: %s)", tool.GetName(), pick.GetModel().GetName(), strings.ToLower(tool.GetCategory()))
	}
	out := toolError(tool.GetName(), msg, nil)
	out.Reply.Metadata.RequestedModel = name
	out.keepsToolErrorShape = true
	return out
}

func toFileContents(fs []files.File) []*executorv1.FileContent {
	out := make([]*executorv1.FileContent, len(fs))
	for i, f := range fs {
		out[i] = &executorv1.FileContent{Path: f.Path, Sha256: f.SHA256, Content: f.Content, SizeBytes: int32(f.Size),
			ModifiedAt: f.Modified.UTC().Format(time.RFC3339)}
	}
	return out
}

// mergeInitialContext fills arguments the continuing call left out from
// the thread's first call, except per-call settings, arguments this tool
// does not take (the thread may have started in another tool), and files
// and images: the history already holds those, as they were shared, and
// reading them again from disk would fail once they move.
func mergeInitialContext(args map[string]any, initial *structpb.Struct, declares func(string) bool) {
	for k, v := range initial.AsMap() {
		switch k {
		case "temperature", "thinking_mode", "model", "continuation_id", "prompt", "absolute_file_paths", "images":
			continue
		}
		if _, set := args[k]; !set && declares(k) {
			args[k] = v
		}
	}
}

func stringList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, item := range list {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// checkModelNames refuses a model name longer than any model's
// (maxResolvedName), without quoting it, wherever the call names one: its
// model, and consensus's models. A tool repeats a name in its reply.
func checkModelNames(tool string, args map[string]any) *Outcome {
	names := []any{args["model"]}
	if models, ok := args["models"].([]any); ok {
		for _, m := range models {
			if m, ok := m.(map[string]any); ok {
				names = append(names, m["model"])
			}
		}
	}
	for _, n := range names {
		if n, ok := n.(string); ok && len(n) > maxResolvedName {
			return ptr(toolError(tool, fmt.Sprintf("Error: a model name of %d bytes is longer than any model's "+
				"(%d bytes): name the model as listmodels lists it", len(n), maxResolvedName), nil))
		}
	}
	return nil
}
