package memory

import (
	"context"

	"github.com/zenmcp/zen/services/platform/tokens"
)

// Selection is the part of a thread's history that fits a budget.
type Selection struct {
	Thread     *Thread
	Turns      []Turn // oldest first, across the thread's chain
	Total      int    // turns along the whole chain
	Omitted    int    // older turns left out
	TokensUsed int64
}

// SelectHistory walks the turns of the thread and its ancestors from newest
// to oldest, keeping each while
// the total stays within budget, and returns the kept turns oldest first.
// The newest turn that does not fit ends the walk, so the history never has
// a gap in the middle.
func (s *Service) SelectHistory(ctx context.Context, id, clientID string, budget int64) (Selection, error) {
	t, err := s.Get(ctx, id, clientID)
	if err != nil {
		return Selection{}, err
	}
	chain, err := s.Chain(ctx, t)
	if err != nil {
		return Selection{}, err
	}
	var turns []Turn
	for _, c := range chain {
		turns = append(turns, c.Turns...)
	}
	var used int64
	start := len(turns)
	for i := len(turns) - 1; i >= 0; i-- {
		cost := turnCost(turns[i])
		if used+cost > budget {
			break
		}
		used += cost
		start = i
	}
	return Selection{Thread: t, Turns: turns[start:], Total: len(turns), Omitted: start, TokensUsed: used}, nil
}

// turnCost estimates a turn as rendered: its content plus a header line.
func turnCost(t Turn) int64 {
	const header = 16
	return tokens.Estimate(t.Content) + header
}
