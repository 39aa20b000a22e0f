package tools

import (
	"encoding/json"
	"fmt"
	"slices"

	"google.golang.org/protobuf/types/known/structpb"
)

// stepArgs are the fields every workflow step carries.
type stepArgs struct {
	Step             string
	StepNumber       int
	TotalSteps       int
	NextStepRequired bool
	Findings         string
	FilesChecked     []string
	RelevantFiles    []string
	RelevantContext  []string
	Issues           []any
	Confidence       string
	Hypothesis       string
	UseAssistant     bool
	Images           []string
}

func readStep(args map[string]any, defaultConfidence string) stepArgs {
	a := stepArgs{
		Step: strArg(args, "step"), StepNumber: intArg(args, "step_number", 1), TotalSteps: intArg(args, "total_steps", 1),
		Findings: strArg(args, "findings"), FilesChecked: stringList(args["files_checked"]),
		RelevantFiles: stringList(args["relevant_files"]), RelevantContext: stringList(args["relevant_context"]),
		Confidence: strArg(args, "confidence"), Hypothesis: strArg(args, "hypothesis"), UseAssistant: true,
		Images: stringList(args["images"]),
	}
	a.NextStepRequired, _ = args["next_step_required"].(bool)
	if v, ok := args["use_assistant_model"].(bool); ok {
		a.UseAssistant = v
	}
	a.Issues, _ = args["issues_found"].([]any)
	if a.Confidence == "" {
		a.Confidence = defaultConfidence
	}
	if a.StepNumber > a.TotalSteps {
		a.TotalSteps = a.StepNumber
	}
	return a
}

func strArg(args map[string]any, k string) string {
	s, _ := args[k].(string)
	return s
}

func intArg(args map[string]any, k string, def int) int {
	if f, ok := args[k].(float64); ok {
		return int(f)
	}
	return def
}

func boolArg(args map[string]any, k string, def bool) bool {
	if b, ok := args[k].(bool); ok {
		return b
	}
	return def
}

// stepRecord is one step as the thread keeps it.
type stepRecord struct {
	Number     int      `json:"step_number"`
	Step       string   `json:"step"`
	Findings   string   `json:"findings,omitempty"`
	Confidence string   `json:"confidence,omitempty"`
	Hypothesis string   `json:"hypothesis,omitempty"`
	Files      []string `json:"relevant_files,omitempty"`
	// Planner: which branch the step belongs to, when any.
	Branch string `json:"branch_id,omitempty"`
}

// workflowState is everything a workflow remembers between steps. It lives
// in the thread, in the model_metadata of the tool's latest turn, so two
// sessions never share it and any executor can take the next step.
type workflowState struct {
	Tool            string           `json:"tool"`
	InitialRequest  string           `json:"initial_request"`
	History         []stepRecord     `json:"work_history"`
	FilesChecked    []string         `json:"files_checked,omitempty"`
	RelevantFiles   []string         `json:"relevant_files,omitempty"`
	RelevantContext []string         `json:"relevant_context,omitempty"`
	Issues          []any            `json:"issues_found,omitempty"`
	Hypotheses      []map[string]any `json:"hypotheses,omitempty"`
	Images          []string         `json:"images,omitempty"`
	Confidence      string           `json:"confidence,omitempty"`

	// Planner: branch names to the step numbers on them.
	Branches map[string][]int `json:"branches,omitempty"`
	// Tracer: the chosen mode and target.
	TraceMode string `json:"trace_mode,omitempty"`
	// Consensus: the proposal every model sees, who to ask, what they said.
	Proposal  string           `json:"proposal,omitempty"`
	Models    []map[string]any `json:"models,omitempty"`
	Responses []map[string]any `json:"responses,omitempty"`
}

// stateFor is the state a step builds on: empty at step 1, which starts a
// new investigation even in an old thread, else what the thread holds.
func stateFor(tool string, c *Call, step int) *workflowState {
	if step == 1 {
		return &workflowState{Tool: tool}
	}
	return restoreState(tool, c.WorkflowState)
}

// restoreState reads the state the edge found in the thread; it belongs to
// this tool or it is ignored.
func restoreState(tool string, s *structpb.Struct) *workflowState {
	st := &workflowState{Tool: tool}
	if s == nil {
		return st
	}
	raw, err := json.Marshal(s.AsMap())
	if err != nil {
		return st
	}
	var got workflowState
	if json.Unmarshal(raw, &got) != nil || got.Tool != tool {
		return st
	}
	return &got
}

// toStruct is the state as the thread stores it.
func (s *workflowState) toStruct() *structpb.Struct {
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: workflow state does not encode: %v", err))
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return payload(map[string]any{"workflow": m})
}

// record adds a step to the state and consolidates what it found. A step
// sent again (the same number) replaces the earlier one.
func (s *workflowState) record(a stepArgs) {
	if a.StepNumber == 1 && s.InitialRequest == "" {
		s.InitialRequest = a.Step
	}
	rec := stepRecord{Number: a.StepNumber, Step: a.Step, Findings: a.Findings, Confidence: a.Confidence,
		Hypothesis: a.Hypothesis, Files: a.RelevantFiles}
	if i := slices.IndexFunc(s.History, func(r stepRecord) bool { return r.Number == a.StepNumber }); i >= 0 {
		s.History[i] = rec
	} else {
		s.History = append(s.History, rec)
	}
	s.FilesChecked = union(s.FilesChecked, a.FilesChecked)
	s.RelevantFiles = union(s.RelevantFiles, a.RelevantFiles)
	s.RelevantContext = union(s.RelevantContext, a.RelevantContext)
	s.Images = union(s.Images, a.Images)
	s.Issues = append(s.Issues, a.Issues...)
	if a.Hypothesis != "" {
		s.Hypotheses = append(s.Hypotheses, map[string]any{"step": a.StepNumber, "hypothesis": a.Hypothesis, "confidence": a.Confidence})
	}
	s.Confidence = a.Confidence
}

// findings lists each step's findings as "Step N: ...".
func (s *workflowState) findings() []string {
	var out []string
	for _, r := range s.History {
		if r.Findings != "" {
			out = append(out, fmt.Sprintf("Step %d: %s", r.Number, r.Findings))
		}
	}
	return out
}

func union(a, b []string) []string {
	for _, x := range b {
		if !slices.Contains(a, x) {
			a = append(a, x)
		}
	}
	return a
}

func anyList[T any](xs []T) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}
