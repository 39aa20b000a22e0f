package call

import executorv1 "github.com/zenmcp/zen/proto/gen/zen/executor/v1"

// Summary is what one call did, for the line the edge logs for it. It is
// filled as the call goes, so a call that fails part way says how far it
// got.
type Summary struct {
	// Model and Provider answered the call. The executor says which, since
	// the router may fall back to another provider; until a model is
	// resolved, Model is the name the caller asked for.
	Model, Provider string
	// InputTokens and OutputTokens add up the call's model calls.
	InputTokens, OutputTokens int64
	// ThreadID is the thread the call continued or started.
	ThreadID string
}

// requested notes what the caller asked for.
func (s *Summary) requested(args map[string]any) {
	s.Model, _ = args["model"].(string)
	s.ThreadID, _ = args["continuation_id"].(string)
}

// prepared notes the model the call was prepared for.
func (s *Summary) prepared(req *executorv1.ExecuteToolRequest) {
	if m := req.GetModel(); m != nil {
		s.Model, s.Provider = m.GetName(), m.GetProvider()
	}
}

// executed notes what the executor's model calls used.
func (s *Summary) executed(res *executorv1.ToolResult) {
	u := res.GetUsage()
	if u == nil {
		return
	}
	if u.GetModel() != "" {
		s.Model, s.Provider = u.GetModel(), u.GetProvider()
	}
	s.InputTokens, s.OutputTokens = u.GetInputTokens(), u.GetOutputTokens()
}
