package prompts

import (
	"strings"
	"testing"
)

func TestEveryPromptLoads(t *testing.T) {
	for _, name := range []string{"chat", "chat_request_footer", "agent_turn", "new_conversation", "follow_up", "last_exchange"} {
		if strings.TrimSpace(Text(name)) == "" {
			t.Errorf("prompt %q is empty", name)
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
