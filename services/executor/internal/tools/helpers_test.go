package tools

import (
	"strings"
	"testing"
)

func TestParseExpert(t *testing.T) {
	cases := []struct{ in, status, key string }{
		{"```json\n{\"status\": \"x\", \"k\": 1}\n```", "x", "k"},
		{"{\"status\": \"y\"}", "y", "status"},
		{"plain words", "analysis_complete", "raw_analysis"},
		{"  ", "empty_response", "error"},
		{"```\nnot json\n```", "analysis_complete", "raw_analysis"},
	}
	for _, c := range cases {
		got := parseExpert(c.in)
		if got["status"] != c.status || got[c.key] == nil {
			t.Errorf("parseExpert(%q) = %v", c.in, got)
		}
	}
}

func TestExtractGeneratedCode(t *testing.T) {
	rest, code := extractGeneratedCode("a <GENERATED-CODE>one</GENERATED-CODE> b <GENERATED-CODE>\ntwo\n</GENERATED-CODE> c")
	if code != "two" || strings.Contains(rest, "GENERATED") || !strings.Contains(rest, "a") || !strings.Contains(rest, "c") {
		t.Errorf("rest %q code %q", rest, code)
	}
	if rest, code := extractGeneratedCode("no block"); rest != "no block" || code != "" {
		t.Errorf("rest %q code %q", rest, code)
	}
}

func TestCapCLIOutput(t *testing.T) {
	if s, note := capCLIOutput("short"); s != "short" || note != "" {
		t.Errorf("short: %q %q", s, note)
	}
	long := strings.Repeat("a", maxCLIChars+1)
	if s, note := capCLIOutput(long + "<SUMMARY> gist </SUMMARY>"); s != "gist" || note != "output_summarized" {
		t.Errorf("summary: %q %q", s, note)
	}
	if s, note := capCLIOutput(long); note != "output_truncated" || len(s) > 4500 || !strings.Contains(s, "first 4,000") {
		t.Errorf("truncated: %d %q", len(s), note)
	}
}

func TestConsensusModels(t *testing.T) {
	entry := func(m, s string) consensusModel { return consensusModel{Model: m, Stance: s} }
	_, err := consensusModels([]consensusModel{entry("a", "for"), entry("A", "for")})
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("case-insensitive duplicate: %v", err)
	}
	got, err := consensusModels([]consensusModel{entry("a", "for"), {Model: "a"}})
	if err != nil || got[1].Stance != "neutral" {
		t.Errorf("same model, two stances: %v %v", got, err)
	}
	if _, err := consensusModels([]consensusModel{entry("a", "for")}); err == nil {
		t.Error("one model accepted")
	}
}

func TestWorkflowStateRoundTrip(t *testing.T) {
	st := &workflowState{Tool: "debug"}
	st.record(stepArgs{StepNumber: 1, Step: "s1", Findings: "f1", RelevantFiles: []string{"/a"}, Confidence: "low", Hypothesis: "h"})
	st.record(stepArgs{StepNumber: 2, Step: "s2", Findings: "f2", RelevantFiles: []string{"/a", "/b"}, Confidence: "high"})
	st.record(stepArgs{StepNumber: 2, Step: "s2 again", Findings: "f2b", Confidence: "high"})
	back := restoreState("debug", st.toStruct())
	if len(back.History) != 2 || back.History[1].Step != "s2 again" || len(back.RelevantFiles) != 2 || back.InitialRequest != "s1" {
		t.Errorf("restored %+v", back)
	}
	if other := restoreState("thinkdeep", st.toStruct()); len(other.History) != 0 {
		t.Error("another tool's state was restored")
	}
}
