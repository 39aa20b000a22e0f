package memory

import (
	"context"
	"strings"
	"time"

	"github.com/zenmcp/zen/services/platform/turnmeta"
)

// Limits are the limits the service enforces, as configured when it
// started: callers ask for them with each call instead of keeping them,
// so a restart with other limits takes effect at once.
type Limits struct {
	MaxTurns int
	TTL      time.Duration
	// MaxWeight is what one thread may weigh (MaxThreadWeight).
	MaxWeight int64
}

// Limits reports the limits in force.
func (s *Service) Limits() Limits {
	return Limits{MaxTurns: s.maxTurns, TTL: s.ttl, MaxWeight: MaxThreadWeight}
}

// ModelWindow is the model a history is selected for: its name picks the
// tokenizer, its context window the budgets.
type ModelWindow struct {
	Model         string
	ContextWindow int64
}

// Prepared is everything a call that continues a thread needs from memory
// before it runs.
type Prepared struct {
	Thread *Thread
	// LastModel is the model a call that names none inherits.
	LastModel string
	// Remaining is how many more turns the thread may hold.
	Remaining int
	// WorkflowState is the newest state the calling tool left in the
	// thread; nil when it left none.
	WorkflowState map[string]any
	// History fits Window; nil when the call inherits a model whose
	// context window is not known (a thread written before windows were
	// kept, or one whose model answered through another tool).
	History *Selection
	Window  ModelWindow
}

// PrepareFrom answers everything a call that continues a thread needs,
// from the thread and its ancestors read once (a chain ReadChain read):
// its last model, its history (SelectFrom), the remaining turns and the
// tool's workflow state. With window nil the history is selected for the
// thread's last model, at the context window that model had when it
// answered (see Served).
func (s *Service) PrepareFrom(ctx context.Context, chain []*Thread, tool string, window *ModelWindow) (Prepared,
	error) {
	t := chain[len(chain)-1]
	last := lastModelTurn(chain)
	p := Prepared{Thread: t, LastModel: last.ModelName, Remaining: s.maxTurns - len(t.Turns),
		WorkflowState: workflowState(t.Turns, tool)}
	switch {
	case window != nil:
		p.Window = *window
	case last.ContextWindow > 0:
		p.Window = ModelWindow{Model: last.ModelName, ContextWindow: last.ContextWindow}
	default:
		return p, nil
	}
	sel, err := s.SelectFrom(ctx, chain, SelectParams{ContextWindow: p.Window.ContextWindow, Model: p.Window.Model})
	if err != nil {
		return Prepared{}, err
	}
	p.History = &sel
	return p, nil
}

// workflowState is the state of the tool's newest turn that has one.
func workflowState(turns []Turn, tool string) map[string]any {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].ToolName == tool && turns[i].WorkflowState != nil {
			return turns[i].WorkflowState
		}
	}
	return nil
}

// MaxSessionImages bounds SessionImages: a call sends at most five images
// (the reference's limit, which the edge holds), and a thread may name
// hundreds of thousands (an import's turns, within its weight), each of
// which gathered, and then tried, cost a final step 30 s.
const MaxSessionImages = 5

// SessionImages are the images (paths, not data URLs: those are as large as
// the image, and already in the turns) of the tool's turns in its current
// workflow session, back to its newest step 1, newest first, each once, at
// most MaxSessionImages.
func SessionImages(turns []Turn, tool string) []string {
	return sessionPaths(turns, tool, MaxSessionImages, func(t Turn) []string { return t.Images },
		func(img string) bool { return !strings.HasPrefix(img, "data:") })
}

// MaxSessionFiles bounds SessionFiles: a step may name thousands of paths
// and an import write any number, each of which the edge checks against
// its file policy before the budget decides what is read.
const MaxSessionFiles = 1000

// SessionFiles are the files the tool's steps named relevant in its current
// workflow session, back to its newest step 1: newest step first, each
// path once, at most MaxSessionFiles. The steps' turns record them
// (turnmeta.Step.RelevantFiles) for a final step's expert to read them all,
// as the reference's expert reads its consolidated relevant files.
func SessionFiles(turns []Turn, tool string) []string {
	return sessionPaths(turns, tool, MaxSessionFiles,
		func(t Turn) []string { return turnmeta.RelevantFilesIn(t.ModelMetadata) }, nil)
}

// sessionPaths gathers the paths of the tool's turns in its current
// workflow session (back to its newest step 1), newest first, each once,
// those keep takes (nil: all), at most most.
func sessionPaths(turns []Turn, tool string, most int, paths func(Turn) []string, keep func(string) bool) []string {
	var out []string
	seen := map[string]bool{}
	for i := len(turns) - 1; i >= 0 && len(out) < most; i-- {
		t := turns[i]
		if t.ToolName != tool {
			continue
		}
		for _, p := range paths(t) {
			if len(out) < most && !seen[p] && (keep == nil || keep(p)) {
				seen[p] = true
				out = append(out, p)
			}
		}
		if turnmeta.StepNumberIn(t.ModelMetadata) == 1 {
			break
		}
	}
	return out
}

// Served marks the turns that name w's model (its answers, and a workflow
// step called with it) with its context window, for Prepare to select a
// later call's history by when the call inherits the model. Other turns (a
// tool that picks its own models) are left unmarked.
func Served(turns []Turn, w ModelWindow) []Turn {
	if w.Model == "" || w.ContextWindow <= 0 {
		return turns
	}
	for i := range turns {
		if turns[i].ModelName == w.Model {
			turns[i].ContextWindow = w.ContextWindow
		}
	}
	return turns
}
