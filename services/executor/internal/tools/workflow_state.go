package tools

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	memoryv1 "github.com/zenmcp/zen/proto/gen/zen/memory/v1"
	"github.com/zenmcp/zen/services/platform/storedjson"
	"github.com/zenmcp/zen/services/platform/textcut"
	"google.golang.org/protobuf/types/known/structpb"
)

// stepRecord is one step as the thread keeps it.
type stepRecord struct {
	Number     int      `json:"step_number"`
	Step       string   `json:"step"`
	Findings   string   `json:"findings,omitempty"`
	Confidence string   `json:"confidence,omitempty"`
	Hypothesis string   `json:"hypothesis,omitempty"`
	Files      []string `json:"relevant_files,omitempty"`
	// Issues are the step's own, which the state's list holds too: a step
	// sent again takes them out of it. Steps recorded before it was kept
	// have none, and theirs stay.
	Issues []any `json:"issues_found,omitempty"`
	// Planner: which branch the step belongs to, when any, and which
	// earlier step it revises.
	Branch  string `json:"branch_id,omitempty"`
	Revises int    `json:"revises_step_number,omitempty"`
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
	Models    []consensusModel `json:"models,omitempty"`
	Responses []map[string]any `json:"responses,omitempty"`
}

// stateFor is the state a step builds on: empty at step 1, which starts a
// new investigation even in an old thread, else what the thread holds.
func stateFor(tool string, c *Call, step int) *workflowState {
	if step == 1 {
		return &workflowState{Tool: tool}
	}
	if c.WorkflowState == nil {
		return restoreState(tool, legacyState(tool, c.Conversation.GetTurns()))
	}
	return restoreState(tool, c.WorkflowState)
}

// legacyState finds the state a thread written before Turn.workflow_state
// existed keeps in its tool's newest "workflow" model_metadata, among the
// turns of the history; nil when there is none.
func legacyState(tool string, turns []*memoryv1.Turn) *structpb.Struct {
	for i := len(turns) - 1; i >= 0; i-- {
		if turns[i].GetToolName() != tool {
			continue
		}
		if w := turns[i].GetModelMetadata().GetFields()["workflow"].GetStructValue(); w != nil {
			return w
		}
	}
	return nil
}

// restoreState reads the state memory returned for this tool (the edge
// carries it unread); it belongs to this tool or it is ignored.
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

// imagesOf is the images of c the workflow's steps named (st.Images): the
// edge sends a final step the images its tool's earlier turns named, and
// the executor alone knows the workflow's steps. An image without a ref
// (a data URL) is the call's own. All of c's when the edge did not say
// which is which.
func (s *workflowState) imagesOf(c *Call) []string {
	if len(c.ImageRefs) != len(c.Images) {
		return c.Images
	}
	var out []string
	for i, ref := range c.ImageRefs {
		if ref == "" || slices.Contains(s.Images, ref) {
			out = append(out, c.Images[i])
		}
	}
	return out
}

// unkept is the failure a step gets, before any model runs, when the
// thread could not keep its state (every step's findings so far) for the
// next step; nil when it could. Found by memory after the expert had run,
// the step lost its answer and the thread its state.
func (s *workflowState) unkept(tool string, step int) *executorv1.ToolResult {
	why := storedjson.FitsAWorkflowState(s.asMap())
	if why == "" {
		return nil
	}
	return workflowFailure(tool, step, fmt.Sprintf("This step's findings and those of the steps before it are more "+
		"than the conversation keeps for the next step (%s). Send shorter findings, or go on in a new thread: "+
		"step_number 1, without continuation_id.", why))
}

// shortenedVerdict ends the start of a consensus answer the state keeps
// in place of the whole.
const shortenedVerdict = " [...] (shortened here, to keep the conversation within its bound; the whole answer " +
	"is this model's turn in the thread)"

// fitLastVerdict cuts the verdict of the state's last consensus answer
// until the state fits what a thread keeps for the next step. Answers come
// from models, after they are paid for: two long ones took the state past
// it, and the step was refused. The answer reaches the agent whole, and
// its turn keeps it.
func (s *workflowState) fitLastVerdict() {
	last := s.Responses[len(s.Responses)-1]
	verdict, _ := last["verdict"].(string)
	for verdict != "" {
		n, err := storedjson.Size(s.asMap())
		over := n - storedjson.MaxWorkflowStateBytes
		if err != nil || over <= 0 {
			return
		}
		// A byte of text is a byte or more of JSON: cutting as many bytes
		// as the state is over, and the note's, brings it within.
		verdict = textcut.Prefix(verdict, max(0, len(verdict)-over-len(shortenedVerdict)))
		kept := maps.Clone(last)
		kept["verdict"] = verdict + shortenedVerdict
		s.Responses[len(s.Responses)-1] = kept
	}
}

// toStruct is the state as the thread stores it: the step's last turn's
// workflow_state, which only this package reads.
func (s *workflowState) toStruct() *structpb.Struct { return payload(s.asMap()) }

// asMap is the state as JSON decodes it: what the thread stores, and what
// memory measures.
func (s *workflowState) asMap() map[string]any {
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: workflow state does not encode: %v", err))
	}
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	return m
}

// record adds a step to the state and consolidates what it found. A step
// sent again (the same number: a client's retry) replaces the earlier one,
// its issues and hypothesis with it; the files it named stay named.
func (s *workflowState) record(a stepArgs) {
	if a.StepNumber == 1 && s.InitialRequest == "" {
		s.InitialRequest = a.Step
	}
	rec := stepRecord{Number: a.StepNumber, Step: a.Step, Findings: a.Findings, Confidence: a.Confidence,
		Hypothesis: a.Hypothesis, Files: a.RelevantFiles, Issues: anyList(a.Issues)}
	if i := slices.IndexFunc(s.History, func(r stepRecord) bool { return r.Number == a.StepNumber }); i >= 0 {
		s.forget(s.History[i])
		s.History[i] = rec
	} else {
		s.History = append(s.History, rec)
	}
	s.FilesChecked = union(s.FilesChecked, a.FilesChecked)
	s.RelevantFiles = union(s.RelevantFiles, a.RelevantFiles)
	s.RelevantContext = union(s.RelevantContext, a.RelevantContext)
	s.Images = union(s.Images, a.Images)
	s.Issues = append(s.Issues, rec.Issues...)
	if a.Hypothesis != "" {
		// The step as a restored state holds it, a JSON number: forget
		// finds it so either way.
		s.Hypotheses = append(s.Hypotheses, map[string]any{"step": float64(a.StepNumber), "hypothesis": a.Hypothesis,
			"confidence": a.Confidence})
	}
	s.Confidence = a.Confidence
}

// forget takes what an earlier recording of a step added out of the
// state's issues and hypotheses.
func (s *workflowState) forget(r stepRecord) {
	for _, issue := range r.Issues {
		if i := slices.IndexFunc(s.Issues, func(x any) bool { return reflect.DeepEqual(x, issue) }); i >= 0 {
			s.Issues = slices.Delete(s.Issues, i, i+1)
		}
	}
	s.Hypotheses = slices.DeleteFunc(s.Hypotheses, func(h map[string]any) bool {
		return h["step"] == float64(r.Number)
	})
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
