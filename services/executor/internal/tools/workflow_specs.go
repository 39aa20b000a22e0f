package tools

import (
	"fmt"
	"strings"
)

// staged picks required actions by step and confidence: the first step
// explores, low confidence digs, high confidence verifies, near-certainty
// closes.
func staged(first, low, high, closing []string) func(int, string, map[string]any) []string {
	return func(step int, conf string, _ map[string]any) []string {
		switch {
		case step == 1:
			return first
		case conf == "almost_certain" || conf == "certain" || conf == "complete":
			return closing
		case conf == "exploring" || conf == "low" || conf == "incomplete":
			return low
		}
		return high
	}
}

func certain(a stepArgs, _ map[string]any, _ *Call) bool { return a.Confidence == "certain" }

// describe joins the tool's own fields into a line for the expert.
func describe(keys ...string) func(map[string]any) string {
	return func(args map[string]any) string {
		var parts []string
		for _, k := range keys {
			switch v := args[k].(type) {
			case string:
				if v != "" {
					parts = append(parts, k+": "+v)
				}
			case []any:
				if len(v) > 0 {
					parts = append(parts, fmt.Sprintf("%s: %v", k, v))
				}
			case bool:
				parts = append(parts, fmt.Sprintf("%s: %t", k, v))
			}
		}
		return strings.Join(parts, "\n")
	}
}

const validateExpert = "The expert saw only what you sent. Check each point against the code before acting on it, " +
	"drop what does not hold, and keep to the user's scope."

var severityFilter = enum("Lowest severity to report.", "critical", "high", "medium", "low", "all")

func thinkdeepSpec() workflowSpec {
	return workflowSpec{
		name: "thinkdeep", title: "Think deeper",
		description: "Investigate a hard problem step by step, then have another model challenge and extend your " +
			"reasoning: architecture choices, tricky bugs, performance, security trade-offs.",
		expert: true, alwaysExpert: true, confidence: defaultConfidences, defaultConf: "low",
		skip: certain, skipStatus: "deep_thinking_complete_ready_for_implementation",
		skipReason: "the agent is certain of its conclusion",
		pause:      "pause_for_thinkdeep", statusKey: "thinkdeep_status", requiredKey: "thinkdeep_required",
		completeKey: "thinkdeep_complete", completionKey: "complete_thinkdeep",
		fields: map[string]any{
			"problem_context": str("Background the other model needs: constraints, what was tried, what matters."),
			"focus_areas":     strList("Aspects to weigh, e.g. architecture, performance, security."),
		},
		actions: staged(
			[]string{"State the problem and what a good answer must satisfy", "Read the code and documents involved", "List the options and the assumptions behind each"},
			[]string{"Test your assumptions against the code", "Look for constraints you have not considered", "Gather evidence for and against your current idea"},
			[]string{"Probe the weak points of your preferred option", "Check edge cases and failure modes", "Compare the alternatives on the criteria that matter"},
			[]string{"Write down the conclusion and the evidence for it", "Note the remaining risks and how to watch them"},
		),
		considerations: validateExpert, brief: describe("problem_context", "focus_areas"), defaultThinking: "high",
		aliases: map[string]string{"thinkdeep_status": "thinking_status", "thinkdeep_complete": "thinking_complete",
			"complete_thinkdeep": "complete_thinking"},
		statusExtra: func(s *workflowState, args map[string]any) map[string]any {
			return map[string]any{"thinking_confidence": s.Confidence, "analysis_focus": args["focus_areas"]}
		},
	}
}

func codereviewSpec() workflowSpec {
	return workflowSpec{
		name: "codereview", title: "Code review",
		description: "Review code step by step (quality, security, performance, architecture), then have another model " +
			"validate the review. Step 1 needs relevant_files.",
		expert: true, embedFiles: true, requireAtStep1: "relevant_files", confidence: defaultConfidences, defaultConf: "low",
		skip: func(_ stepArgs, args map[string]any, c *Call) bool {
			return args["review_validation_type"] == "internal"
		},
		skipStatus: "code_review_complete_ready_for_implementation", skipReason: "the review was asked to stay internal",
		pause: "pause_for_code_review", statusKey: "code_review_status", requiredKey: "codereview_required",
		completeKey: "code_review_complete", completionKey: "complete_code_review",
		fields: map[string]any{
			"review_validation_type": enum("external: a model validates the review; internal: yours alone.", "external", "internal"),
			"review_type":            enum("What to review for.", "full", "security", "performance", "quick"),
			"focus_on":               str("Anything to look at especially."),
			"standards":              str("Coding standards to hold the code to."),
			"severity_filter":        severityFilter,
		},
		actions: staged(
			[]string{"Read every relevant file completely", "Understand the code's purpose and structure", "Note the main risks to examine"},
			[]string{"Look for bugs, missing error handling and unsafe input", "Check resource use and concurrency", "Check naming, duplication and structure"},
			[]string{"Confirm each issue with the exact lines", "Rate each issue's severity", "Look for the same problem elsewhere"},
			[]string{"Make sure every issue has a location and a fix", "Order the issues by severity"},
		),
		considerations: validateExpert, brief: describe("review_type", "focus_on", "standards", "severity_filter"),
		statusExtra: func(s *workflowState, args map[string]any) map[string]any {
			return map[string]any{"issues_by_severity": bySeverity(s.Issues), "review_validation_type": orDefault(args["review_validation_type"], "external")}
		},
	}
}

func precommitSpec() workflowSpec {
	return workflowSpec{
		name: "precommit", title: "Pre-commit validation",
		description: "Validate changes before a commit: completeness, correctness, security, tests. zen never runs git: " +
			"you run git status and git diff, save the full diff as zen_precommit.changeset and list it in relevant_files. " +
			"Step 1 needs path.",
		expert: true, embedFiles: true, requireAtStep1: "path", confidence: defaultConfidences, defaultConf: "low",
		skip: func(_ stepArgs, args map[string]any, c *Call) bool {
			return args["precommit_type"] == "internal"
		},
		skipStatus: "validation_complete_ready_for_commit", skipReason: "the validation was asked to stay internal",
		pause: "pause_for_validation", statusKey: "validation_status", requiredKey: "precommit_required",
		completeKey: "validation_complete", completionKey: "complete_validation",
		fields: map[string]any{
			"precommit_type":   enum("external: a model validates the changes; internal: yours alone.", "external", "internal"),
			"path":             str("Absolute path of the repository root."),
			"compare_to":       str("A git ref to compare against instead of the working tree's changes."),
			"include_staged":   map[string]any{"type": "boolean", "default": true, "description": "Include staged changes."},
			"include_unstaged": map[string]any{"type": "boolean", "default": true, "description": "Include unstaged changes."},
			"focus_on":         str("Anything to look at especially."),
			"severity_filter":  severityFilter,
			"total_steps":      integer("Your estimate of the steps needed; at least 3.", 3, maxSteps),
		},
		actions: func(step int, conf string, args map[string]any) []string {
			if step == 1 {
				return []string{"Run git status and git diff (staged and unstaged, or against compare_to) in the repository",
					"Save the complete diff as zen_precommit.changeset in your working directory and list it in relevant_files",
					"Read every changed file in full"}
			}
			last := fmt.Sprintf("You are on step %d of at least 3; keep next_step_required true until the validation is done", step)
			if args["continuation_id"] != nil && orDefault(args["precommit_type"], "external") == "external" {
				// Fast track: the thread already holds the context, and the
				// expert validates what this step sends.
				last = "Fast track (continuing a conversation, external validation): this can be the final step; set " +
					"next_step_required false once the changeset is in relevant_files"
			}
			return []string{"Check each change against its purpose: is anything missing or left over?",
				"Look for bugs, security problems and broken tests the change introduces", last}
		},
		considerations: validateExpert, brief: describe("path", "compare_to", "focus_on", "severity_filter"),
		statusExtra: func(s *workflowState, args map[string]any) map[string]any {
			return map[string]any{"issues_identified": len(s.Issues), "precommit_type": orDefault(args["precommit_type"], "external")}
		},
	}
}

func debugSpec() workflowSpec {
	return workflowSpec{
		name: "debug", title: "Debug",
		description: "Find the root cause of a bug step by step: symptoms, evidence, hypotheses. The final step has another " +
			"model check your conclusion against the code.",
		expert: true, filesHeader: "ESSENTIAL FILES FOR DEBUGGING", confidence: defaultConfidences, defaultConf: "low",
		skip: certain, skipStatus: "certain_confidence_proceed_with_fix", skipReason: "the agent is certain of the root cause",
		pause: "pause_for_investigation", statusKey: "investigation_status", requiredKey: "investigation_required",
		completeKey: "investigation_complete", completionKey: "complete_investigation",
		omit: []string{},
		actions: staged(
			[]string{"Search for the code related to the symptoms", "Read the files involved and how they connect", "Learn what the code is meant to do"},
			[]string{"Trace the failing path call by call", "Check edge cases, configuration and input", "Collect evidence for each candidate cause"},
			[]string{"Confirm the cause with the exact code", "Explain how it produces every symptom", "Look for the same mistake elsewhere"},
			[]string{"Write down the causal chain", "Check the smallest fix resolves it without side effects"},
		),
		considerations: validateExpert,
		statusExtra: func(s *workflowState, _ map[string]any) map[string]any {
			return map[string]any{"hypotheses_formed": len(s.Hypotheses)}
		},
	}
}

func secauditSpec() workflowSpec {
	return workflowSpec{
		name: "secaudit", title: "Security audit",
		description: "Audit code for security step by step (OWASP Top 10, compliance, infrastructure, dependencies), then " +
			"have another model validate the findings.",
		expert: true, embedFiles: true, confidence: defaultConfidences, defaultConf: "low",
		skip: certain, skipStatus: "security_analysis_complete", skipReason: "the agent is certain of its audit",
		pause: "pause_for_security_audit", statusKey: "security_audit_status", requiredKey: "secaudit_required",
		completeKey: "security_audit_complete", completionKey: "complete_security_audit",
		fields: map[string]any{
			"security_scope":          str("What is audited: the application, its users, its exposure."),
			"threat_level":            enum("How exposed the system is.", "low", "medium", "high", "critical"),
			"compliance_requirements": strList("Standards to check, e.g. SOC2, PCI DSS, HIPAA, GDPR."),
			"audit_focus":             enum("Where to look.", "owasp", "compliance", "infrastructure", "dependencies", "comprehensive"),
			"severity_filter":         severityFilter,
		},
		actions: staged(
			[]string{"Map the system: entry points, trust boundaries, sensitive data", "Read authentication and authorization code", "List the dependencies and their versions"},
			[]string{"Check input handling for injection", "Check secrets, crypto and session handling", "Check access control on every entry point"},
			[]string{"Confirm each finding with the exact code and an attack path", "Rate each by impact and likelihood"},
			[]string{"Give each finding a remediation", "Order the findings by risk"},
		),
		considerations: validateExpert, brief: describe("security_scope", "threat_level", "compliance_requirements", "audit_focus"),
	}
}

func analyzeSpec() workflowSpec {
	return workflowSpec{
		name: "analyze", title: "Analyze code",
		description: "Analyze a codebase step by step (architecture, performance, maintainability, patterns), then have " +
			"another model add its view. Step 1 needs relevant_files.",
		expert: true, embedFiles: true, requireAtStep1: "relevant_files", confidence: defaultConfidences, defaultConf: "low",
		pause: "pause_for_analysis", statusKey: "analysis_status", requiredKey: "analyze_required",
		completeKey: "analysis_complete", completionKey: "complete_analysis",
		fields: map[string]any{
			"analysis_type": enum("What to analyze for.", "architecture", "performance", "security", "quality", "general"),
			"output_format": enum("How to present the result.", "summary", "detailed", "actionable"),
		},
		actions: staged(
			[]string{"Read the relevant files and map the structure", "Identify the main components and how they depend on each other"},
			[]string{"Look at how data flows and where the complexity sits", "Note patterns, duplication and coupling"},
			[]string{"Weigh the strengths and the risks", "Find the few changes that would matter most"},
			[]string{"Summarize the analysis with evidence"},
		),
		considerations: validateExpert, brief: describe("analysis_type", "output_format"),
	}
}

func refactorSpec() workflowSpec {
	return workflowSpec{
		name: "refactor", title: "Refactoring analysis",
		description: "Find refactoring opportunities step by step (code smells, decomposition, modernization, " +
			"organization), then have another model validate them. Step 1 needs relevant_files.",
		expert: true, embedFiles: true, requireAtStep1: "relevant_files",
		confidence: []any{"exploring", "incomplete", "partial", "complete"}, defaultConf: "incomplete",
		skip:       func(a stepArgs, _ map[string]any, _ *Call) bool { return a.Confidence == "complete" },
		skipStatus: "refactoring_analysis_complete_ready_for_implementation", skipReason: "the agent's analysis is complete",
		pause: "pause_for_refactoring_analysis", statusKey: "refactoring_status", requiredKey: "refactor_required",
		completeKey: "refactoring_complete", completionKey: "complete_refactoring",
		fields: map[string]any{
			"confidence":           enum("How complete your analysis is.", "exploring", "incomplete", "partial", "complete"),
			"refactor_type":        enum("What kind of refactoring to look for.", "codesmells", "decompose", "modernize", "organization"),
			"focus_areas":          strList("Aspects to weigh, e.g. readability, performance."),
			"style_guide_examples": strList("Absolute paths of files whose style to follow."),
		},
		actions: staged(
			[]string{"Read the relevant files in full", "Note long functions, large classes and duplication"},
			[]string{"List concrete refactorings with their location", "Check what each would break"},
			[]string{"Order the refactorings by value and risk", "Check the tests that would protect each"},
			[]string{"Make sure each refactoring has a location and a plan"},
		),
		considerations: validateExpert, brief: describe("refactor_type", "focus_areas"),
	}
}

func testgenSpec() workflowSpec {
	return workflowSpec{
		name: "testgen", title: "Test generation",
		description: "Plan tests step by step (behaviour, edge cases, failure modes), then have another model write or " +
			"extend them. Step 1 needs relevant_files.",
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

func orDefault(v any, def string) string {
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return def
}
