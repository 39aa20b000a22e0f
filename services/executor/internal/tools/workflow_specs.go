package tools

import (
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// refactorConfidences is refactor's own scale: how complete the analysis is.
var refactorConfidences = []string{"exploring", "incomplete", "partial", "complete"}

// staged picks required actions by step and confidence: the first step
// explores, low confidence digs, high confidence verifies, near-certainty
// closes.
func staged(first, low, high, closing []string) func(*workflowArgs) []string {
	return func(a *workflowArgs) []string {
		switch conf := a.Confidence; {
		case a.StepNumber == 1:
			return first
		case conf == "almost_certain" || conf == "certain" || conf == "complete":
			return closing
		case conf == "exploring" || conf == "low" || conf == "incomplete":
			return low
		}
		return high
	}
}

func certain(a *workflowArgs) bool { return a.Confidence == "certain" }

// setting is one of a tool's own arguments, named as in its schema.
type setting struct {
	name  string
	value any // a string or a []string
}

// describe joins the settings a call gave into lines for the expert.
func describe(settings ...setting) string {
	var parts []string
	for _, s := range settings {
		switch v := s.value.(type) {
		case string:
			if v != "" {
				parts = append(parts, s.name+": "+v)
			}
		case []string:
			if len(v) > 0 {
				parts = append(parts, fmt.Sprintf("%s: %v", s.name, v))
			}
		}
	}
	return strings.Join(parts, "\n")
}

const validateExpert = "The expert saw only what you sent. Check each point against the code before acting on it, " +
	"drop what does not hold, and keep to the user's scope."

func severityFilter() *jsonschema.Schema { return enum("", "critical", "high", "medium", "low", "all") }

// severityFilterOf is the severity filter a call gave, or its default.
func severityFilterOf(a *workflowArgs) setting {
	return setting{"severity_filter", orDefault(a.SeverityFilter, "all")}
}

// external tells whether the expert validates (the default) or the agent
// alone (internal).
func external(validation string) *jsonschema.Schema {
	return enum(validation+": internal skips the expert.", "external", "internal")
}

func thinkdeepSpec() workflowSpec {
	return workflowSpec{
		name: "thinkdeep", title: "Think deeper",
		description: "Reason through a hard problem; another model then challenges and extends your reasoning.",
		expert:      true, alwaysExpert: true, confidence: defaultConfidences, defaultConf: "low",
		skip: certain, skipStatus: "deep_thinking_complete_ready_for_implementation",
		skipReason: "the agent is certain of its conclusion",
		pause:      "pause_for_thinkdeep", statusKey: "thinkdeep_status", requiredKey: "thinkdeep_required",
		completeKey: "thinkdeep_complete", completionKey: "complete_thinkdeep",
		fields: map[string]*jsonschema.Schema{
			"problem_context": str(""),
			"focus_areas":     strList(""),
		},
		actions: staged(
			[]string{"State the problem and what a good answer must satisfy", "Read the code and documents involved", "List the options and the assumptions behind each"},
			[]string{"Test your assumptions against the code", "Look for constraints you have not considered", "Gather evidence for and against your current idea"},
			[]string{"Probe the weak points of your preferred option", "Check edge cases and failure modes", "Compare the alternatives on the criteria that matter"},
			[]string{"Write down the conclusion and the evidence for it", "Note the remaining risks and how to watch them"},
		),
		considerations: validateExpert, defaultThinking: "high",
		brief: func(a *workflowArgs) string {
			return describe(setting{"problem_context", a.ProblemContext}, setting{"focus_areas", a.FocusAreas})
		},
		aliases: map[string]string{"thinkdeep_status": "thinking_status", "thinkdeep_complete": "thinking_complete",
			"complete_thinkdeep": "complete_thinking"},
		statusExtra: func(s *workflowState, a *workflowArgs) map[string]any {
			var focus any // null when the call named none, as in the reference
			if a.FocusAreas != nil {
				focus = anyList(a.FocusAreas)
			}
			return map[string]any{"thinking_confidence": s.Confidence, "analysis_focus": focus,
				"current_step": a.StepNumber, "total_steps": a.TotalSteps}
		},
	}
}

func codereviewSpec() workflowSpec {
	return workflowSpec{
		name: "codereview", title: "Code review",
		description: "Review code (quality, security, performance, architecture); another model validates. " +
			"Step 1 needs relevant_files.",
		expert: true, embedFiles: true, requireAtStep1: "relevant_files", confidence: defaultConfidences, defaultConf: "low",
		skip:       func(a *workflowArgs) bool { return a.ReviewValidationType == "internal" },
		skipStatus: "code_review_complete_ready_for_implementation", skipReason: "the review was asked to stay internal",
		pause: "pause_for_code_review", statusKey: "code_review_status", requiredKey: "codereview_required",
		completeKey: "code_review_complete", completionKey: "complete_code_review",
		fields: map[string]*jsonschema.Schema{
			"review_validation_type": external("Default external"),
			"review_type":            enum("", "full", "security", "performance", "quick"),
			"focus_on":               str(""),
			"standards":              str(""),
			"severity_filter":        severityFilter(),
		},
		actions: staged(
			[]string{"Read every relevant file completely", "Understand the code's purpose and structure", "Note the main risks to examine"},
			[]string{"Look for bugs, missing error handling and unsafe input", "Check resource use and concurrency", "Check naming, duplication and structure"},
			[]string{"Confirm each issue with the exact lines", "Rate each issue's severity", "Look for the same problem elsewhere"},
			[]string{"Make sure every issue has a location and a fix", "Order the issues by severity"},
		),
		considerations: validateExpert,
		brief: func(a *workflowArgs) string {
			return describe(setting{"review_type", orDefault(a.ReviewType, "full")}, setting{"focus_on", a.FocusOn},
				setting{"standards", a.Standards}, severityFilterOf(a))
		},
		statusExtra: func(s *workflowState, a *workflowArgs) map[string]any {
			return map[string]any{"issues_by_severity": bySeverity(s.Issues),
				"review_validation_type": orDefault(a.ReviewValidationType, "external")}
		},
	}
}

func precommitSpec() workflowSpec {
	return workflowSpec{
		name: "precommit", title: "Pre-commit validation",
		description: "Validate changes before a commit. zen never runs git: save your full git diff as " +
			"zen_precommit.changeset and list it in relevant_files. Step 1 needs path.",
		expert: true, embedFiles: true, requireAtStep1: "path", confidence: defaultConfidences, defaultConf: "low",
		skip:       func(a *workflowArgs) bool { return a.PrecommitType == "internal" },
		skipStatus: "validation_complete_ready_for_commit", skipReason: "the validation was asked to stay internal",
		pause: "pause_for_validation", statusKey: "validation_status", requiredKey: "precommit_required",
		completeKey: "validation_complete", completionKey: "complete_validation",
		fields: map[string]*jsonschema.Schema{
			"precommit_type":   external("Default external"),
			"path":             str("Repository root."),
			"compare_to":       str("Git ref to diff against instead of the working tree."),
			"include_staged":   on(""),
			"include_unstaged": on(""),
			"focus_on":         str(""),
			"severity_filter":  severityFilter(),
			"total_steps":      integer("", 3, maxSteps),
		},
		actions: func(a *workflowArgs) []string {
			step := a.StepNumber
			if step == 1 {
				return []string{"Run git status and git diff (staged and unstaged, or against compare_to) in the repository",
					"Save the complete diff as zen_precommit.changeset in your working directory and list it in relevant_files",
					"Read every changed file in full"}
			}
			last := fmt.Sprintf("You are on step %d of at least 3; keep next_step_required true until the validation is done", step)
			if a.ContinuationID != "" && orDefault(a.PrecommitType, "external") == "external" {
				// Fast track: the thread already holds the context, and the
				// expert validates what this step sends.
				last = "Fast track (continuing a conversation, external validation): this can be the final step; set " +
					"next_step_required false once the changeset is in relevant_files"
			}
			return []string{"Check each change against its purpose: is anything missing or left over?",
				"Look for bugs, security problems and broken tests the change introduces", last}
		},
		considerations: validateExpert,
		brief: func(a *workflowArgs) string {
			return describe(setting{"path", a.Path}, setting{"compare_to", a.CompareTo}, setting{"focus_on", a.FocusOn},
				severityFilterOf(a))
		},
		statusExtra: func(s *workflowState, a *workflowArgs) map[string]any {
			return map[string]any{"issues_identified": len(s.Issues), "precommit_type": orDefault(a.PrecommitType, "external")}
		},
	}
}

func debugSpec() workflowSpec {
	return workflowSpec{
		name: "debug", title: "Debug",
		description: "Find a bug's root cause from evidence and hypotheses; another model checks your conclusion.",
		expert:      true, filesHeader: "ESSENTIAL FILES FOR DEBUGGING", confidence: defaultConfidences, defaultConf: "low",
		skip: certain, skipStatus: "certain_confidence_proceed_with_fix", skipReason: "the agent is certain of the root cause",
		pause: "pause_for_investigation", statusKey: "investigation_status", requiredKey: "investigation_required",
		completeKey: "investigation_complete", completionKey: "complete_investigation", hypothesisConcludes: true,
		omit: []string{},
		actions: staged(
			[]string{"Search for the code related to the symptoms", "Read the files involved and how they connect", "Learn what the code is meant to do"},
			[]string{"Trace the failing path call by call", "Check edge cases, configuration and input", "Collect evidence for each candidate cause"},
			[]string{"Confirm the cause with the exact code", "Explain how it produces every symptom", "Look for the same mistake elsewhere"},
			[]string{"Write down the causal chain", "Check the smallest fix resolves it without side effects"},
		),
		considerations: validateExpert,
		statusExtra: func(s *workflowState, _ *workflowArgs) map[string]any {
			return map[string]any{"hypotheses_formed": len(s.Hypotheses)}
		},
	}
}

func secauditSpec() workflowSpec {
	return workflowSpec{
		name: "secaudit", title: "Security audit",
		description: "Audit security (OWASP, compliance, infrastructure, dependencies); another model validates.",
		expert:      true, embedFiles: true, confidence: defaultConfidences, defaultConf: "low",
		skip: certain, skipStatus: "security_analysis_complete", skipReason: "the agent is certain of its audit",
		pause: "pause_for_security_audit", statusKey: "security_audit_status", requiredKey: "secaudit_required",
		completeKey: "security_audit_complete", completionKey: "complete_security_audit",
		fields: map[string]*jsonschema.Schema{
			"security_scope":          str(""),
			"threat_level":            enum("", "low", "medium", "high", "critical"),
			"compliance_requirements": strList("e.g. SOC2, PCI DSS, HIPAA, GDPR"),
			"audit_focus":             enum("", "owasp", "compliance", "infrastructure", "dependencies", "comprehensive"),
			"severity_filter":         severityFilter(),
		},
		actions: staged(
			[]string{"Map the system: entry points, trust boundaries, sensitive data", "Read authentication and authorization code", "List the dependencies and their versions"},
			[]string{"Check input handling for injection", "Check secrets, crypto and session handling", "Check access control on every entry point"},
			[]string{"Confirm each finding with the exact code and an attack path", "Rate each by impact and likelihood"},
			[]string{"Give each finding a remediation", "Order the findings by risk"},
		),
		considerations: validateExpert,
		brief: func(a *workflowArgs) string {
			return describe(setting{"security_scope", a.SecurityScope},
				setting{"threat_level", orDefault(a.ThreatLevel, "medium")},
				setting{"compliance_requirements", a.ComplianceRequirements},
				setting{"audit_focus", orDefault(a.AuditFocus, "comprehensive")},
				severityFilterOf(a))
		},
	}
}

func analyzeSpec() workflowSpec {
	return workflowSpec{
		name: "analyze", title: "Analyze code",
		description: "Analyze code (architecture, performance, quality, patterns); another model adds its view. " +
			"Step 1 needs relevant_files.",
		expert: true, embedFiles: true, requireAtStep1: "relevant_files", confidence: defaultConfidences, defaultConf: "low",
		pause: "pause_for_analysis", statusKey: "analysis_status", requiredKey: "analyze_required",
		completeKey: "analysis_complete", completionKey: "complete_analysis",
		fields: map[string]*jsonschema.Schema{
			"analysis_type": enum("", "architecture", "performance", "security", "quality", "general"),
			"output_format": enum("", "summary", "detailed", "actionable"),
		},
		actions: staged(
			[]string{"Read the relevant files and map the structure", "Identify the main components and how they depend on each other"},
			[]string{"Look at how data flows and where the complexity sits", "Note patterns, duplication and coupling"},
			[]string{"Weigh the strengths and the risks", "Find the few changes that would matter most"},
			[]string{"Summarize the analysis with evidence"},
		),
		considerations: validateExpert,
		brief: func(a *workflowArgs) string {
			return describe(setting{"analysis_type", orDefault(a.AnalysisType, "general")},
				setting{"output_format", orDefault(a.OutputFormat, "detailed")})
		},
	}
}

func refactorSpec() workflowSpec {
	return workflowSpec{
		name: "refactor", title: "Refactoring analysis",
		description: "Find refactorings (smells, decomposition, modernization, organization); another model " +
			"validates. Step 1 needs relevant_files.",
		expert: true, embedFiles: true, requireAtStep1: "relevant_files",
		confidence: refactorConfidences, defaultConf: "incomplete",
		skip:       func(a *workflowArgs) bool { return a.Confidence == "complete" },
		skipStatus: "refactoring_analysis_complete_ready_for_implementation", skipReason: "the agent's analysis is complete",
		pause: "pause_for_refactoring_analysis", statusKey: "refactoring_status", requiredKey: "refactor_required",
		completeKey: "refactoring_complete", completionKey: "complete_refactoring",
		fields: map[string]*jsonschema.Schema{
			"refactor_type":        enum("", "codesmells", "decompose", "modernize", "organization"),
			"focus_areas":          strList(""),
			"style_guide_examples": strList("Files whose style to follow."),
		},
		actions: staged(
			[]string{"Read the relevant files in full", "Note long functions, large classes and duplication"},
			[]string{"List concrete refactorings with their location", "Check what each would break"},
			[]string{"Order the refactorings by value and risk", "Check the tests that would protect each"},
			[]string{"Make sure each refactoring has a location and a plan"},
		),
		considerations: validateExpert,
		brief: func(a *workflowArgs) string {
			return describe(setting{"refactor_type", orDefault(a.RefactorType, "codesmells")},
				setting{"focus_areas", a.FocusAreas}, setting{"style_guide_examples", a.StyleGuideExamples})
		},
	}
}

func testgenSpec() workflowSpec {
	return workflowSpec{
		name: "testgen", title: "Test generation",
		description: "Plan tests (behaviour, edge cases, failures); another model writes them. " +
			"Step 1 needs relevant_files.",
		expert: true, embedFiles: true, requireAtStep1: "relevant_files", confidence: defaultConfidences, defaultConf: "low",
		skip: certain, skipStatus: "test_generation_complete_ready_for_implementation", skipReason: "the agent is certain of its test plan",
		pause: "pause_for_test_analysis", statusKey: "test_generation_status", requiredKey: "testgen_required",
		completeKey: "test_generation_complete", completionKey: "complete_test_generation",
		actions: staged(
			[]string{"Read the code to test and its existing tests", "Learn the test framework and conventions in use"},
			[]string{"List the behaviours and the edge cases", "Find the failure modes worth a test"},
			[]string{"Decide which tests matter most", "Plan the fixtures and fakes they need"},
			[]string{"Write down the test plan"},
		),
		considerations: validateExpert,
	}
}

func bySeverity(issues []any) map[string]any {
	out := map[string]any{}
	for _, i := range issues {
		if m, ok := i.(map[string]any); ok {
			if s, ok := m["severity"].(string); ok {
				n, _ := out[s].(int)
				out[s] = n + 1
			}
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
