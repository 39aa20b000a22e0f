package turnmeta

import (
	"math"

	"google.golang.org/protobuf/types/known/structpb"
)

// The keys of model_metadata this package owns.
const (
	usageKey   = "usage"
	stepKey    = "step"
	traceIDKey = "trace_id"
)

// The largest values Read gives: more than any model call uses or costs, and
// small enough that a thread's sum stays exact in a float64 (the page's
// JavaScript numbers) for millions of turns.
const (
	MaxTokens  = 1e12
	MaxCostUSD = 1e9
	maxStep    = math.MaxInt32
)

// Usage is what one model call used: tokens in (the whole prompt) and out,
// and the cost in US dollars when the model has a price (0 when not).
// Its JSON is the stored record's shape, which chat's reply metadata shows
// too.
type Usage struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	TotalTokens  int64   `json:"total_tokens"`
	CostUSD      float64 `json:"cost_usd,omitempty"`
}

// PutUsage records u in md, which it creates when nil, and returns md.
func PutUsage(md *structpb.Struct, u Usage) *structpb.Struct {
	f := map[string]*structpb.Value{
		"input_tokens":  structpb.NewNumberValue(float64(u.InputTokens)),
		"output_tokens": structpb.NewNumberValue(float64(u.OutputTokens)),
		"total_tokens":  structpb.NewNumberValue(float64(u.TotalTokens)),
	}
	if u.CostUSD > 0 {
		f["cost_usd"] = structpb.NewNumberValue(u.CostUSD)
	}
	return put(md, usageKey, structpb.NewStructValue(&structpb.Struct{Fields: f}))
}

// ReadUsage is the usage recorded in md; zero when there is none (a user
// turn, a turn stored before usage was recorded).
func ReadUsage(md *structpb.Struct) Usage {
	f := md.GetFields()[usageKey].GetStructValue().GetFields()
	return Usage{
		InputTokens:  int64(bounded(f["input_tokens"], MaxTokens)),
		OutputTokens: int64(bounded(f["output_tokens"], MaxTokens)),
		TotalTokens:  int64(bounded(f["total_tokens"], MaxTokens)),
		CostUSD:      bounded(f["cost_usd"], MaxCostUSD),
	}
}

// Step is a workflow step as its user turn records it for people.
type Step struct {
	StepNumber       int32  `json:"step_number"`
	TotalSteps       int32  `json:"total_steps"`
	NextStepRequired bool   `json:"next_step_required"`
	Status           string `json:"status"` // the step's reply status, e.g. pause_for_investigation
	Confidence       string `json:"confidence"`
	Findings         string `json:"findings"`
	// RelevantFiles are the paths the step named relevant, which a final
	// step's expert reads with its own (SessionFiles in memory).
	RelevantFiles []string `json:"relevant_files,omitempty"`
}

// PutStep records s in md, which it creates when nil, and returns md.
func PutStep(md *structpb.Struct, s Step) *structpb.Struct {
	f := map[string]*structpb.Value{
		"step_number":        structpb.NewNumberValue(float64(s.StepNumber)),
		"total_steps":        structpb.NewNumberValue(float64(s.TotalSteps)),
		"next_step_required": structpb.NewBoolValue(s.NextStepRequired),
		"status":             structpb.NewStringValue(s.Status),
		"confidence":         structpb.NewStringValue(s.Confidence),
		"findings":           structpb.NewStringValue(s.Findings),
	}
	if len(s.RelevantFiles) > 0 {
		paths := make([]*structpb.Value, len(s.RelevantFiles))
		for i, p := range s.RelevantFiles {
			paths[i] = structpb.NewStringValue(p)
		}
		f[relevantFilesKey] = structpb.NewListValue(&structpb.ListValue{Values: paths})
	}
	return put(md, stepKey, structpb.NewStructValue(&structpb.Struct{Fields: f}))
}

// relevantFilesKey is where a step's record keeps its relevant files.
const relevantFilesKey = "relevant_files"

// RelevantFilesIn are the relevant files recorded in md as memory holds a
// turn's model_metadata (decoded JSON): what is there, its strings alone
// (an import may write anything).
func RelevantFilesIn(md map[string]any) []string {
	rec, _ := md[stepKey].(map[string]any)
	list, _ := rec[relevantFilesKey].([]any)
	return paths(list)
}

// paths are the non-empty strings of list, the rest left out.
func paths(list []any) []string {
	var out []string
	for _, v := range list {
		if p, ok := v.(string); ok && p != "" {
			out = append(out, p)
		}
	}
	return out
}

// StepNumberIn is the step number recorded in md as memory holds a turn's
// model_metadata (decoded JSON), or 0.
func StepNumberIn(md map[string]any) int {
	rec, _ := md[stepKey].(map[string]any)
	n, _ := rec["step_number"].(float64)
	return int(n)
}

// ReadStep is the step recorded in md, and whether there is one. A field
// of the wrong kind reads as its zero value.
func ReadStep(md *structpb.Struct) (Step, bool) {
	rec := md.GetFields()[stepKey].GetStructValue()
	if rec == nil {
		return Step{}, false
	}
	f := rec.GetFields()
	return Step{
		StepNumber:       int32(bounded(f["step_number"], maxStep)),
		TotalSteps:       int32(bounded(f["total_steps"], maxStep)),
		NextStepRequired: f["next_step_required"].GetBoolValue(),
		Status:           f["status"].GetStringValue(),
		Confidence:       f["confidence"].GetStringValue(),
		Findings:         f["findings"].GetStringValue(),
		RelevantFiles:    paths(f[relevantFilesKey].GetListValue().AsSlice()),
	}, true
}

// PutTraceID records the trace id of the exchange that wrote the turn in
// md, which it creates when nil, and returns md.
func PutTraceID(md *structpb.Struct, id string) *structpb.Struct {
	return put(md, traceIDKey, structpb.NewStringValue(id))
}

// ReadTraceID is the trace id recorded in md, as stored: an import may put
// anything there, so a reader that links it checks its form.
func ReadTraceID(md *structpb.Struct) string {
	return md.GetFields()[traceIDKey].GetStringValue()
}

func put(md *structpb.Struct, key string, v *structpb.Value) *structpb.Struct {
	if md == nil {
		md = &structpb.Struct{}
	}
	if md.Fields == nil {
		md.Fields = map[string]*structpb.Value{}
	}
	md.Fields[key] = v
	return md
}

// bounded reads a number no less than 0 and no more than most: a value
// that is not finite or is negative reads as 0, one above most as most.
func bounded(v *structpb.Value, most float64) float64 {
	n := v.GetNumberValue()
	if math.IsNaN(n) || math.IsInf(n, 0) || n < 0 {
		return 0
	}
	return min(n, most)
}
