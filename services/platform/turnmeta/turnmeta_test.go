package turnmeta

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/types/known/structpb"
)

// TestRoundTrip: what Put records, Read gives back, beside other keys.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	md := &structpb.Struct{Fields: map[string]*structpb.Value{"workflow": structpb.NewBoolValue(true)}}
	u := Usage{InputTokens: 1200, OutputTokens: 34, TotalTokens: 1234, CostUSD: 0.002}
	s := Step{StepNumber: 2, TotalSteps: 3, NextStepRequired: true, Status: "pause_for_investigation",
		Confidence: "low", Findings: "a clue", RelevantFiles: []string{"/src/a.go", "/src/b.go"}}
	md = PutTraceID(PutStep(PutUsage(md, u), s), "0af7651916cd43dd8448eb211c80319c")
	gotStep, ok := ReadStep(md)
	got := []any{ReadUsage(md), gotStep, ok, ReadTraceID(md), md.GetFields()["workflow"].GetBoolValue()}
	want := []any{u, s, true, "0af7651916cd43dd8448eb211c80319c", true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	// As memory holds it: decoded JSON.
	raw, err := md.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	var decoded map[string]any
	if err := json.Unmarshal(raw, &decoded); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.RelevantFiles, RelevantFilesIn(decoded)); diff != "" {
		t.Errorf("RelevantFilesIn (-want +got):\n%s", diff)
	}
	if _, ok := ReadStep(PutUsage(nil, u)); ok {
		t.Error("ReadStep found a step in metadata that holds none")
	}
	unpriced := PutUsage(nil, Usage{InputTokens: 1}).GetFields()["usage"].GetStructValue().GetFields()
	if unpriced["cost_usd"] != nil {
		t.Errorf("an unpriced call records cost_usd %v; want none", unpriced["cost_usd"])
	}
}

// TestReadBoundsWhatAnImportHolds: metadata comes through imports too. A
// number no model call can have reads as 0 (not finite, negative) or as the
// largest allowed, so that sums stay finite and fit their integers.
func TestReadBoundsWhatAnImportHolds(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		in   float64
		want Usage
	}{
		{"infinite", math.Inf(1), Usage{}},
		{"not a number", math.NaN(), Usage{}},
		{"negative", -5, Usage{}},
		{"beyond int64", 1e19, Usage{InputTokens: MaxTokens, OutputTokens: MaxTokens, TotalTokens: MaxTokens,
			CostUSD: MaxCostUSD}},
		{"ordinary", 7, Usage{InputTokens: 7, OutputTokens: 7, TotalTokens: 7, CostUSD: 7}},
	} {
		n := structpb.NewNumberValue(tc.in)
		md := &structpb.Struct{Fields: map[string]*structpb.Value{"usage": structpb.NewStructValue(&structpb.Struct{
			Fields: map[string]*structpb.Value{"input_tokens": n, "output_tokens": n, "total_tokens": n, "cost_usd": n}})}}
		if diff := cmp.Diff(tc.want, ReadUsage(md)); diff != "" {
			t.Errorf("%s: (-want +got):\n%s", tc.name, diff)
		}
	}
	odd, err := structpb.NewStruct(map[string]any{"step": map[string]any{"step_number": 1e300, "total_steps": "two",
		"status": 3, "findings": "kept"}, "usage": "not a record", "trace_id": 12})
	if err != nil {
		t.Fatal(err)
	}
	s, ok := ReadStep(odd)
	got := []any{s, ok, ReadUsage(odd), ReadTraceID(odd)}
	want := []any{Step{StepNumber: math.MaxInt32, Findings: "kept"}, true, Usage{}, ""}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metadata of the wrong kinds (-want +got):\n%s", diff)
	}
}
