package call

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"
	"google.golang.org/protobuf/types/known/structpb"
)

func stepTool(t *testing.T) *Tool {
	t.Helper()
	schema, err := structpb.NewStruct(map[string]any{
		"type": "object", "additionalProperties": false,
		"properties": map[string]any{
			"step_number": map[string]any{"type": "integer", "minimum": 1, "maximum": 1000},
			"temperature": map[string]any{"type": "number", "minimum": 0, "maximum": 1},
			"models": map[string]any{"type": "array", "items": map[string]any{"type": "object",
				"properties": map[string]any{
					"temperature": map[string]any{"type": "number", "minimum": 0, "maximum": 1},
				}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tool, err := NewTool(&executorv1.Tool{Name: "debug", InputSchema: schema})
	if err != nil {
		t.Fatal(err)
	}
	return tool
}

// TestNumbersOutOfBoundsAreRefusedClearly: a number past its schema's
// bounds, or past what a float64 holds, is refused with a message naming
// the argument, its range and the value as sent, before anything uses it
// (2^63 once became a negative step number).
func TestNumbersOutOfBoundsAreRefusedClearly(t *testing.T) {
	t.Parallel()
	tool := stepTool(t)
	const (
		check = ". Check the call against the tool's input schema"
		step  = "invalid arguments for debug: step_number must be a whole number from 1 to 1000; got "
	)
	tests := []struct {
		name, raw, want string
	}{
		{"2^63", `{"step_number": 9223372036854775808}`, step + "9223372036854775808" + check},
		{"1e300", `{"step_number": 1e300}`, step + "1e300" + check},
		{"beyond float64", `{"step_number": 1e400}`, step + "1e400" + check},
		{"below the minimum", `{"step_number": 0}`, step + "0" + check},
		{"not whole", `{"step_number": 2.5}`, step + "2.5" + check},
		{"number over its maximum", `{"temperature": 7}`,
			"invalid arguments for debug: temperature must be a number from 0 to 1; got 7" + check},
		{"nested, beyond float64", `{"models": [{"temperature": -1e999}]}`,
			"invalid arguments for debug: models: the number -1e999 is out of range" + check},
		{"in range", `{"step_number": 1000, "temperature": 0.5, "models": [{"temperature": 1}]}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			args, out := tool.Decode(json.RawMessage(tt.raw))
			got := ""
			if out != nil {
				got = out.Reply.Content
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decode(%s) (-want +got):\n%s", tt.raw, diff)
			}
			if tt.want == "" {
				if _, err := structpb.NewStruct(args); err != nil {
					t.Errorf("accepted arguments do not convert for the executor: %v", err)
				}
			}
		})
	}
}

// TestAWorkflowRefusalNeverReportsAWrappedStep: the step number a refused
// workflow call reports back is never 2^63 wrapped to a negative number.
func TestAWorkflowRefusalNeverReportsAWrappedStep(t *testing.T) {
	t.Parallel()
	tool := stepTool(t)
	tool.Workflow = true
	args := map[string]any{"step_number": 9223372036854775808.0}
	_, bad := tool.Decode(json.RawMessage(`{"step_number": 9223372036854775808}`))
	got := tool.asWorkflowError(*bad, args)
	if diff := cmp.Diff(0, *got.Reply.StepNumber); diff != "" {
		t.Errorf("step_number reported (-want +got):\n%s", diff)
	}
}
