package tools

import (
	"strings"
	"testing"

	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/modelrule"
)

// TestModelFieldStatesTheRule: in both modes every tool that resolves a
// model describes `model` in modelrule's words (auto mode: choose, or
// `auto`; otherwise the default), and with no model available says where
// to look.
func TestModelFieldStatesTheRule(t *testing.T) {
	t.Parallel()
	none := goldenCatalog(true)
	none.Ranked = nil
	for name, c := range map[string]Catalog{"auto": goldenCatalog(true), "fixed": goldenCatalog(false),
		"no models": none} {
		mode := modelrule.Mode{Auto: c.AutoMode, Default: c.DefaultModel}
		for _, tool := range All() {
			if !tool.RequiresModel {
				continue
			}
			desc := tool.Schema(c).Properties["model"].Description
			if !strings.HasPrefix(desc, mode.Field()) {
				t.Errorf("%s, %s: model = %q; want it to begin %q", name, tool.Name, desc, mode.Field())
			}
			if name == "no models" && !strings.HasSuffix(desc, modelrule.FieldNoModels) {
				t.Errorf("%s, %s: model = %q; want it to say none is available yet", name, tool.Name, desc)
			}
		}
	}
}

// TestListmodelsStatesTheRuleAndTheSetup: listmodels says the rule, and
// while no provider is configured, how to configure one first.
func TestListmodelsStatesTheRuleAndTheSetup(t *testing.T) {
	t.Parallel()
	const help = "no model provider is configured: set CUSTOM_API_URL in zen's environment, then restart zen"
	for name, resp := range map[string]*routerv1.ListModelsResponse{
		"auto":        {AutoMode: true, DefaultModel: "auto", ConfiguredProviders: []string{"custom"}},
		"fixed":       {DefaultModel: "gpt-5", ConfiguredProviders: []string{"openai"}},
		"no provider": {AutoMode: true, DefaultModel: "auto", SetupHelp: help},
	} {
		got := modelListing(resp)
		mode := modelrule.Mode{Auto: resp.GetAutoMode(), Default: resp.GetDefaultModel()}
		if !strings.Contains(got, mode.Rule()) {
			t.Errorf("%s: listmodels does not state the rule %q:\n%s", name, mode.Rule(), got)
		}
		if hasHelp := strings.Contains(got, help); hasHelp != (name == "no provider") {
			t.Errorf("%s: setup help shown = %v:\n%s", name, hasHelp, got)
		}
	}
}
