package memory

import (
	"context"
	"time"

	"github.com/google/uuid"
)

// Reads of whole threads outside any room, for the tests alone: the
// service reads threads within the room its caller makes (ReadChain,
// ReadAlone).

// Get returns a live thread the client may read; not found as ReadChain.
func (s *Service) Get(ctx context.Context, id, clientID string) (*Thread, error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, ErrNotFound
	}
	t, err := s.store.Get(ctx, id, s.now())
	if err != nil {
		return nil, err
	}
	if t.ClientID != clientID {
		return nil, ErrNotFound
	}
	return t, nil
}

// Chain returns t's ancestors and t, oldest first, as ReadChain would.
func (s *Service) Chain(ctx context.Context, t *Thread) ([]*Thread, error) {
	heads, _, err := s.ancestors(ctx, t)
	if err != nil {
		return nil, err
	}
	return s.readAncestors(ctx, t, heads, MaxChainWeight)
}

// LastModel is the model of the newest assistant turn along t's chain.
func (s *Service) LastModel(ctx context.Context, t *Thread) (string, error) {
	chain, err := s.Chain(ctx, t)
	if err != nil {
		return "", err
	}
	return LastModelOf(chain), nil
}

// Prepare is PrepareFrom over the thread's chain.
func (s *Service) Prepare(ctx context.Context, id, clientID, tool string, window *ModelWindow) (Prepared, error) {
	chain, err := s.ReadChain(ctx, id, clientID, nil)
	if err != nil {
		return Prepared{}, err
	}
	return s.PrepareFrom(ctx, chain, tool, window)
}

// SelectHistory is SelectFrom over the thread's chain.
func (s *Service) SelectHistory(ctx context.Context, id, clientID string, p SelectParams) (Selection, error) {
	chain, err := s.ReadChain(ctx, id, clientID, nil)
	if err != nil {
		return Selection{}, err
	}
	return s.SelectFrom(ctx, chain, p)
}

// SetClock makes the service read the time from now.
func (s *Service) SetClock(now func() time.Time) { s.now = now }
