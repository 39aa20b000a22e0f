package call

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zenmcp/zen/services/platform/reply"
	"github.com/zenmcp/zen/services/platform/tokens"
)

func TestCapOutputFitsTheBudgetAndSaysWhereTheRestIs(t *testing.T) {
	long := strings.Repeat("é réponse longue ", 3000) // ~54 KB, two-byte runes
	payload := &reply.Reply{Status: "success", Content: long, Metadata: reply.Metadata{ToolName: "chat"}}
	capOutput(payload, 2000, "t-1")
	raw, _ := json.Marshal(payload)
	content := payload.Content
	if got := tokens.Estimate(string(raw)); got > 2000 {
		t.Errorf("capped result is ~%d tokens, over 2000", got)
	}
	if !utf8.ValidString(content) || !strings.Contains(content, "zen://threads/t-1") {
		t.Errorf("content tail = %q", content[len(content)-200:])
	}
	if meta := payload.Metadata; !meta.OutputTruncated || meta.FullContentChars != len(long) {
		t.Errorf("metadata = %+v", meta)
	}

	short := &reply.Reply{Status: "success", Content: "brief"}
	capOutput(short, 2000, "t-1")
	if short.Content != "brief" || short.Metadata.OutputTruncated {
		t.Errorf("a short result changed: %+v", short)
	}
}

// TestCapOutputShortensAWorkflowsOwnFields: a workflow step's answer is in
// its own fields (a consensus's accumulated answers, an investigation's
// summary), which the cap left whole: the client got the whole oversize
// result, and Claude Code refuses one past its limit. Their longest
// strings are cut now, each saying so and where the whole step is.
func TestCapOutputShortensAWorkflowsOwnFields(t *testing.T) {
	t.Parallel()
	verdict := strings.Repeat("I agree, because… ", 12_000) // ~240 KB each
	payload := &reply.Reply{Status: "consensus_workflow_complete", Metadata: reply.Metadata{ToolName: "consensus"},
		Fields: map[string]any{
			"step_number": 2.0, "model_consulted": "b",
			"model_response": map[string]any{"model": "b", "verdict": verdict},
			"accumulated_responses": []any{map[string]any{"model": "a", "verdict": verdict},
				map[string]any{"model": "b", "verdict": verdict}},
			"next_steps": "Synthesize for the user.",
		}}
	raw := capOutput(payload, 25_000, "t-1")
	if got := tokens.EstimateBytes(int64(len(raw))); got > 25_000 {
		t.Errorf("capped result is ~%d tokens, over 25,000", got)
	}
	var back map[string]any
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	first := back["accumulated_responses"].([]any)[0].(map[string]any)["verdict"].(string)
	if !utf8.ValidString(first) || !strings.Contains(first, "zen://threads/t-1") || len(first) >= len(verdict) {
		t.Errorf("a cut field should end saying where the whole step is; it is %d bytes, ending %q", len(first),
			first[max(0, len(first)-200):])
	}
	if back["next_steps"] != "Synthesize for the user." || back["model_consulted"] != "b" {
		t.Errorf("short fields changed: %v %v", back["next_steps"], back["model_consulted"])
	}
	if meta, _ := back["metadata"].(map[string]any); meta["output_truncated"] != true {
		t.Errorf("metadata = %v, want output_truncated", meta)
	}
}

// TestCapOutputWeighsTextAsJSONWritesIt: code escapes many of its bytes in
// JSON (<, > and & take six each), and the cap weighed raw bytes: an
// answer of code went out whole at four times the budget, or was cut to a
// fifth of it. Short strings beside the content (a step's file list) are
// left as they are, and a reply with nothing long enough to cut goes as
// it is, not marked as cut.
func TestCapOutputWeighsTextAsJSONWritesIt(t *testing.T) {
	t.Parallel()
	code := strings.Repeat("if a < b && c > d { x <<= 1 } // \"quoted\"\n", 5000) // ~215 KB
	paths := make([]any, 800)
	for i := range paths {
		paths[i] = fmt.Sprintf("/repo/src/pkg%03d/file.go", i)
	}
	short := make([]any, 20_000)
	for i := range short {
		short[i] = "x"
	}
	for name, tc := range map[string]struct {
		r        *reply.Reply
		cut      bool
		fillMost bool // the cut answer uses most of the budget
	}{
		"code": {r: &reply.Reply{Status: "success", Content: code}, cut: true, fillMost: true},
		"code and a list": {r: &reply.Reply{Status: "success", Content: code, Fields: map[string]any{"files": paths}},
			cut: true},
		"nothing long enough": {r: &reply.Reply{Status: "success", Fields: map[string]any{"many": short}}},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			raw := capOutput(tc.r, 25_000, "t-1")
			got := tokens.EstimateBytes(int64(len(raw)))
			if tc.cut && (got > 25_000 || tc.fillMost && got < 15_000) {
				t.Errorf("capped result is ~%d tokens; want within 25,000, and most of it", got)
			}
			if tc.r.Metadata.OutputTruncated != tc.cut {
				t.Errorf("output_truncated = %v, want %v", tc.r.Metadata.OutputTruncated, tc.cut)
			}
			if files, ok := tc.r.Fields["files"].([]any); ok && fmt.Sprint(files) != fmt.Sprint(paths) {
				t.Error("the short paths were cut")
			}
		})
	}
}
