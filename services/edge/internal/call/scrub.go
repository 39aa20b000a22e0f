package call

import (
	"context"
	"encoding/json"

	"github.com/zenmcp/zen/services/platform/secrets"
)

// Run executes one call. Progress, when set, hears what the call is doing.
// Both what it hears and what Run returns are scrubbed of r.Secrets. The
// outcome's Summary is set even when the call fails.
func (r *Runner) Run(ctx context.Context, name string, rawArgs json.RawMessage,
	progress func(string)) (Outcome, error) {
	var sum Summary
	out, err := r.run(ctx, name, rawArgs, scrubProgress(r.Secrets, progress), &sum)
	out = scrubbed(r.Secrets, out)
	out.Summary = sum
	return out, err
}

// scrubbed removes zen's secrets from what a call returns: the edge is the
// last stop before the client, and the executor it talks to may be a
// separate process that was not told the edge's tokens. An outcome
// deliver encoded was scrubbed there.
func scrubbed(s *secrets.Scrubber, out Outcome) Outcome {
	if out.encoded == nil {
		out.Reply.Scrub(s)
	}
	return out
}

// scrubProgress wraps progress so its messages are scrubbed too.
func scrubProgress(s *secrets.Scrubber, progress func(string)) func(string) {
	if s.Empty() || progress == nil {
		return progress
	}
	return func(msg string) { progress(s.String(msg)) }
}
