package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Each tool reads its arguments into one of these structs; the json names
// are the schema's property names (TestArgumentsMatchSchemas holds them
// together). A field the call leaves out keeps the value the struct had
// before decoding, which is how defaults are given.

// modelArgs are the per-call model settings.
type modelArgs struct {
	Model        string   `json:"model"`
	Temperature  *float64 `json:"temperature"`
	ThinkingMode string   `json:"thinking_mode"`
}

type chatArgs struct {
	Prompt            string   `json:"prompt"`
	AbsoluteFilePaths []string `json:"absolute_file_paths"`
	Images            []string `json:"images"`
	WorkingDirectory  string   `json:"working_directory_absolute_path"`
	ContinuationID    string   `json:"continuation_id"`
	modelArgs
}

type clinkArgs struct {
	Prompt            string   `json:"prompt"`
	CLIName           string   `json:"cli_name"`
	Role              string   `json:"role"`
	AbsoluteFilePaths []string `json:"absolute_file_paths"`
	Images            []string `json:"images"`
	ContinuationID    string   `json:"continuation_id"`
}

// promptArgs are challenge's and apilookup's.
type promptArgs struct {
	Prompt string `json:"prompt"`
}

// stepArgs are the fields every workflow step carries.
type stepArgs struct {
	Step             string           `json:"step"`
	StepNumber       int              `json:"step_number"`
	TotalSteps       int              `json:"total_steps"`
	NextStepRequired bool             `json:"next_step_required"`
	Findings         string           `json:"findings"`
	FilesChecked     []string         `json:"files_checked"`
	RelevantFiles    []string         `json:"relevant_files"`
	RelevantContext  []string         `json:"relevant_context"`
	Issues           []map[string]any `json:"issues_found"`
	Confidence       string           `json:"confidence"`
	Hypothesis       string           `json:"hypothesis"`
	UseAssistant     bool             `json:"use_assistant_model"`
	Images           []string         `json:"images"`
	ContinuationID   string           `json:"continuation_id"`
}

// newStep is a step before decoding: the defaults of the fields a call
// may leave out.
func newStep() stepArgs { return stepArgs{StepNumber: 1, TotalSteps: 1, UseAssistant: true} }

// settle fills in what decoding cannot: the confidence the tool starts
// from, and a total that is never below the step being taken.
func (a *stepArgs) settle(defaultConfidence string) {
	if a.Confidence == "" {
		a.Confidence = defaultConfidence
	}
	a.TotalSteps = max(a.TotalSteps, a.StepNumber)
}

// workflowArgs are the arguments of the expert workflows: the step, the
// model settings, and every tool's own settings (each tool's schema
// declares its own, and the edge refuses the others).
type workflowArgs struct {
	stepArgs
	modelArgs
	ProblemContext         string   `json:"problem_context"`
	FocusAreas             []string `json:"focus_areas"`
	ReviewValidationType   string   `json:"review_validation_type"`
	ReviewType             string   `json:"review_type"`
	FocusOn                string   `json:"focus_on"`
	Standards              string   `json:"standards"`
	SeverityFilter         string   `json:"severity_filter"`
	PrecommitType          string   `json:"precommit_type"`
	Path                   string   `json:"path"`
	CompareTo              string   `json:"compare_to"`
	IncludeStaged          bool     `json:"include_staged"`
	IncludeUnstaged        bool     `json:"include_unstaged"`
	SecurityScope          string   `json:"security_scope"`
	ThreatLevel            string   `json:"threat_level"`
	ComplianceRequirements []string `json:"compliance_requirements"`
	AuditFocus             string   `json:"audit_focus"`
	AnalysisType           string   `json:"analysis_type"`
	OutputFormat           string   `json:"output_format"`
	RefactorType           string   `json:"refactor_type"`
	StyleGuideExamples     []string `json:"style_guide_examples"`
}

func newWorkflowArgs() workflowArgs {
	return workflowArgs{stepArgs: newStep(), IncludeStaged: true, IncludeUnstaged: true}
}

// missing tells whether a setting a step needs (requireAtStep1) is absent.
func (a *workflowArgs) missing(field string) bool {
	switch field {
	case "relevant_files":
		return len(a.RelevantFiles) == 0
	case "path":
		return strings.TrimSpace(a.Path) == ""
	}
	return false
}

type plannerArgs struct {
	stepArgs
	IsStepRevision    bool   `json:"is_step_revision"`
	RevisesStepNumber int    `json:"revises_step_number"`
	IsBranchPoint     bool   `json:"is_branch_point"`
	BranchFromStep    int    `json:"branch_from_step"`
	BranchID          string `json:"branch_id"`
	MoreStepsNeeded   bool   `json:"more_steps_needed"`
	// Model is accepted and ignored, as in the reference.
	Model string `json:"model"`
}

type tracerArgs struct {
	stepArgs
	TargetDescription string `json:"target_description"`
	TraceMode         string `json:"trace_mode"`
	// Model is accepted and ignored, as in the reference.
	Model string `json:"model"`
}

type docgenArgs struct {
	stepArgs
	DocumentComplexity     bool `json:"document_complexity"`
	DocumentFlow           bool `json:"document_flow"`
	UpdateExisting         bool `json:"update_existing"`
	CommentsOnComplexLogic bool `json:"comments_on_complex_logic"`
	NumFilesDocumented     int  `json:"num_files_documented"`
	TotalFilesToDocument   int  `json:"total_files_to_document"`
}

type consensusArgs struct {
	stepArgs
	Models []consensusModel `json:"models"`
	// CurrentModelIndex and ModelResponses are the reference's; zen keeps
	// them in the thread and ignores what a call sends.
	CurrentModelIndex int              `json:"current_model_index"`
	ModelResponses    []map[string]any `json:"model_responses"`
}

// consensusModel is one model consensus consults, as step 1 lists it and
// the thread keeps it.
type consensusModel struct {
	Model        string   `json:"model"`
	Stance       string   `json:"stance"`
	StancePrompt string   `json:"stance_prompt,omitempty"`
	Temperature  *float64 `json:"temperature,omitempty"`
	ThinkingMode string   `json:"thinking_mode,omitempty"`
}

// decodeArgs reads a call's arguments into dst. The edge has checked them
// against the schema already; a mismatch here is a caller that went round
// the edge, told what to fix in JSON's terms, not Go's.
func decodeArgs(tool string, args map[string]any, dst any) error {
	raw, err := json.Marshal(args)
	if err == nil {
		err = json.Unmarshal(raw, dst)
	}
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return fmt.Errorf("invalid arguments for %s: %s must be %s", tool, argumentPath(typeErr.Field, dst),
			jsonKind(typeErr.Type))
	case err != nil:
		return fmt.Errorf("invalid arguments for %s: they must be a JSON object matching the tool's input schema", tool)
	}
	return nil
}

// argumentPath is a field's path as the agent wrote it: encoding/json
// names the embedded structs it passed through (stepArgs.step_number),
// which are no part of the arguments.
func argumentPath(field string, dst any) string {
	embedded := map[string]bool{}
	var collect func(reflect.Type)
	collect = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct {
			return
		}
		for f := range t.Fields() {
			if f.Anonymous {
				embedded[f.Name] = true
			}
			collect(f.Type)
		}
	}
	collect(reflect.TypeOf(dst))
	parts := strings.Split(field, ".")
	kept := parts[:0]
	for _, p := range parts {
		if !embedded[p] {
			kept = append(kept, p)
		}
	}
	return strings.Join(kept, ".")
}

// jsonKind names a Go type as the JSON it decodes from.
func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "an array"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "an object"
}
