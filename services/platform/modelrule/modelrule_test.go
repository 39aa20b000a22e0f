package modelrule

import (
	"strings"
	"testing"
)

// TestEveryWordingStatesTheSameRule: whatever the mode, the rule and the
// field offer `auto` as zen's pick and keep a continuation's model; in
// auto mode the agent is told to choose and that leaving `model` out is
// zen's pick too, otherwise the default is named.
func TestEveryWordingStatesTheSameRule(t *testing.T) {
	t.Parallel()
	for _, m := range []Mode{{Auto: true}, {Default: "gpt-5"}} {
		for name, text := range map[string]string{"rule": m.Rule(), "field": m.Field()} {
			if !strings.Contains(text, "`auto`") {
				t.Errorf("%+v %s = %q: does not offer auto", m, name, text)
			}
			if m.Auto && !strings.Contains(text, "zen pick") {
				t.Errorf("%+v %s = %q: does not say zen picks", m, name, text)
			}
			if !m.Auto && !strings.Contains(text, "gpt-5") {
				t.Errorf("%+v %s = %q: does not name the default", m, name, text)
			}
		}
		if !strings.Contains(m.Rule(), "continuation") {
			t.Errorf("%+v rule = %q: does not say a continuation keeps its model", m, m.Rule())
		}
	}
	auto := Mode{Auto: true}
	if got := auto.Rule(); !strings.HasPrefix(got, "Choose a model for each call") ||
		!strings.Contains(got, "leaving `model` out") {
		t.Errorf("auto mode rule = %q; the agent chooses, and leaving model out is zen's pick", got)
	}
	if got := auto.Field(); !strings.Contains(got, "none") {
		t.Errorf("auto mode field = %q; leaving model out is zen's pick", got)
	}
	if got := (Mode{Default: "gpt-5"}).PromptDefault(); got != "gpt-5" {
		t.Errorf("fixed mode prompt default = %q, want gpt-5", got)
	}
	if got := auto.PromptDefault(); got != Auto {
		t.Errorf("auto mode prompt default = %q, want auto", got)
	}
}
