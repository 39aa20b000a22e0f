package tools

import (
	routerv1 "github.com/zenmcp/zen/proto/gen/zen/router/v1"
	"github.com/zenmcp/zen/services/platform/turnmeta"
)

// usageMeta is what one model call used, as a thread keeps it in the
// answer's model_metadata (turnmeta) and chat's reply metadata shows it:
// tokens in and out, and the cost in US dollars when the model is priced.
// People read it (the gateway's thread browser); prompts never do.
func usageMeta(done *routerv1.GenerateDone) turnmeta.Usage {
	u := done.GetUsage()
	return turnmeta.Usage{InputTokens: int64(u.GetInputTokens()), OutputTokens: int64(u.GetOutputTokens()),
		TotalTokens: int64(u.GetTotalTokens()), CostUSD: max(0, u.GetCostUsd())}
}
