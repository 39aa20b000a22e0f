package memory

import (
	"context"

	"github.com/zenmcp/zen/services/platform/tokens"
)

// Selection is the part of a thread that fits a history budget.
type Selection struct {
	Thread     *Thread
	Turns      []Turn // oldest first
	Omitted    int    // older turns left out
	TokensUsed int64
}

// SelectHistory walks the turns from newest to oldest, keeping each while
// the total stays within budget, and returns the kept turns oldest first.
// The newest turn that does not fit ends the walk, so the history never has
// a gap in the middle.
func (s *Service) SelectHistory(ctx context.Context, id, clientID string, budget int64) (Selection, error) {
	t, err := s.Get(ctx, id, clientID)
	if err != nil {
		return Selection{}, err
	}
	var used int64
	start := len(t.Turns)
	for i := len(t.Turns) - 1; i >= 0; i-- {
		cost := turnCost(t.Turns[i])
		if used+cost > budget {
			break
		}
		used += cost
		start = i
	}
	return Selection{Thread: t, Turns: t.Turns[start:], Omitted: start, TokensUsed: used}, nil
}

// turnCost estimates a turn as rendered: its content plus a header line.
func turnCost(t Turn) int64 {
	const header = 16
	return tokens.Estimate(t.Content) + header
}
