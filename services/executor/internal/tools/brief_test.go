package tools

import (
	"strings"
	"testing"
)

// TestTheExpertIsToldTheToolsSettings: the reference tells a workflow's
// expert every setting of its tool, a default for one the agent left out;
// zen dropped secaudit's severity_filter and refactor's style guide, and
// the defaults of settings the agent did not give, though the tools'
// instructions promise the expert a threat level, a format, a style.
func TestTheExpertIsToldTheToolsSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec workflowSpec
		args workflowArgs
		want []string
	}{
		{secauditSpec(), workflowArgs{}, []string{"threat_level: medium", "audit_focus: comprehensive",
			"severity_filter: all"}},
		{secauditSpec(), workflowArgs{ThreatLevel: "high", AuditFocus: "owasp", SeverityFilter: "high"},
			[]string{"threat_level: high", "audit_focus: owasp", "severity_filter: high"}},
		{analyzeSpec(), workflowArgs{}, []string{"analysis_type: general", "output_format: detailed"}},
		{refactorSpec(), workflowArgs{StyleGuideExamples: []string{"/src/house.go"}},
			[]string{"refactor_type: codesmells", "style_guide_examples: [/src/house.go]"}},
		{codereviewSpec(), workflowArgs{}, []string{"review_type: full", "severity_filter: all"}},
		{precommitSpec(), workflowArgs{}, []string{"severity_filter: all"}},
	} {
		got := tc.spec.brief(&tc.args)
		for _, want := range tc.want {
			if !strings.Contains(got, want) {
				t.Errorf("%s's expert reads %q; want %q in it", tc.spec.name, got, want)
			}
		}
	}
}

// TestACompletionWithoutTheExpertKeepsTheAgentsAnalysis: a final step the
// expert is skipped for reports the agent's conclusion as final_analysis,
// as the reference reads it: debug's hypothesis, every other tool's
// findings (thinkdeep's too, which takes a hypothesis); zen left it empty
// for the tools that take no hypothesis.
func TestACompletionWithoutTheExpertKeepsTheAgentsAnalysis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		spec workflowSpec
		args stepArgs
		want string
	}{
		{debugSpec(), stepArgs{Findings: "a lock held twice", Hypothesis: "the retry path", Confidence: "certain"},
			"the retry path"},
		{secauditSpec(), stepArgs{Findings: "SQL injection in search", Confidence: "certain"},
			"SQL injection in search"},
		{refactorSpec(), stepArgs{Findings: "split the parser", Confidence: "complete"}, "split the parser"},
		{thinkdeepSpec(), stepArgs{Findings: "option B holds", Hypothesis: "B", Confidence: "certain"},
			"option B holds"},
	} {
		got := completion(&workflowState{}, tc.spec, tc.args)
		if got["final_analysis"] != tc.want {
			t.Errorf("%s: final_analysis = %q, want %q", tc.spec.name, got["final_analysis"], tc.want)
		}
	}
}
