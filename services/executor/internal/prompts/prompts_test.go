package prompts

import (
	"os"
	"strings"
	"testing"
)

// keyInstructions pins what each prompt must tell the model; a rewrite
// that loses one of these changes behaviour the tools rely on.
var keyInstructions = map[string][]string{
	"chat":                {"second opinion", "files_required_to_continue", "Disagree openly"},
	"chat_request_footer": {},
	"agent_turn":          {},
	"new_conversation":    {"{turns_left}"},
	"follow_up":           {"{turns_left}"},
	"last_exchange":       {},
	"generate_code":       {"<GENERATED-CODE>", "</GENERATED-CODE>", "--- FILE:"},
	"thinkdeep":           {"Challenge the agent's assumptions", "recommendation", "files_required_to_continue"},
	"codereview":          {"severity (critical, high, medium, low)", "line numbers", "Confirm or reject the agent's issues", "files_required_to_continue"},
	"precommit":           {"zen_precommit.changeset", "ready to commit", "files_required_to_continue"},
	"debug":               {"root cause", "smallest fix", "no bug", "files_required_to_continue"},
	"secaudit":            {"injection", "attack path", "compliance", "files_required_to_continue"},
	"analyze":             {"architect", "output format", "files_required_to_continue"},
	"refactor":            {"refactoring_paused", "Keep behaviour unchanged", "files_required_to_continue"},
	"testgen":             {"edge cases", "test framework", "files_required_to_continue"},
	"consensus":           {"{stance_prompt}", "will not see the other reviewers' answers", "## Verdict", "## Confidence"},
	"consensus_for":       {"SUPPORTIVE", "do not endorse what is harmful"},
	"consensus_against":   {"CRITICAL", "do not oppose a proposal that is genuinely sound"},
	"consensus_neutral":   {"BALANCED", "Do not force an even split"},
	"challenge":           {"{statement}", "do not simply agree"},
	"apilookup":           {"do not answer from memory", "current version", "Do not call apilookup again"},
	"clink_default":       {"<SUMMARY>", "own tools"},
	"clink_planner":       {"<SUMMARY>", "numbered steps"},
	"clink_codereviewer":  {"<SUMMARY>", "severity"},

	// codex's reviewer has a shell: it reads the change and changes nothing.
	"clink_codex_codereviewer": {"<SUMMARY>", "severity", "git diff", "change no file"},
}

func TestPromptsPinTheirKeyInstructions(t *testing.T) {
	for name, keys := range keyInstructions {
		text := Text(name)
		if strings.TrimSpace(text) == "" {
			t.Errorf("prompt %q is empty", name)
		}
		for _, k := range keys {
			if !strings.Contains(text, k) {
				t.Errorf("prompt %q lost %q", name, k)
			}
		}
		if strings.Contains(text, `\n`) {
			t.Errorf("prompt %q holds a literal backslash-n", name)
		}
	}
}

func TestEveryPromptFileIsPinned(t *testing.T) {
	entries, err := os.ReadDir("text")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := strings.TrimSuffix(e.Name(), ".txt")
		if _, ok := keyInstructions[name]; !ok {
			t.Errorf("prompt %q has no entry in keyInstructions", name)
		}
	}
}

func TestSystemPutsTheLocaleFirst(t *testing.T) {
	if got := System("chat", "fr-FR"); !strings.HasPrefix(got, "Always respond in fr-FR.\n\n") {
		t.Errorf("System = %q...", got[:40])
	}
	if got := System("chat", ""); strings.HasPrefix(got, "Always") {
		t.Error("no locale should add no line")
	}
}
