package memory

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
)

// Service applies the thread rules on top of a Store.
type Service struct {
	store    Store
	ttl      time.Duration
	maxTurns int
	now      func() time.Time
}

// NewService returns a service keeping threads for ttl after their last
// write, with at most maxTurns turns each.
func NewService(store Store, ttl time.Duration, maxTurns int) *Service {
	return &Service{store: store, ttl: ttl, maxTurns: maxTurns, now: time.Now}
}

// TTL is how long a thread lives after its last write.
func (s *Service) TTL() time.Duration { return s.ttl }

// MaxTurns is the most turns a thread may hold.
func (s *Service) MaxTurns() int { return s.maxTurns }

// CreateParams describes a new thread.
type CreateParams struct {
	ToolName       string
	ParentID       string
	InitialContext map[string]any
	ClientID       string
	Turns          []Turn
}

// Create starts a thread with a fresh id.
func (s *Service) Create(ctx context.Context, p CreateParams) (*Thread, error) {
	if p.ToolName == "" {
		return nil, fmt.Errorf("%w: tool_name is required", ErrInvalid)
	}
	if len(p.Turns) > s.maxTurns {
		return nil, fmt.Errorf("%w: %d turns exceed the limit of %d", ErrInvalid, len(p.Turns), s.maxTurns)
	}
	if err := validTurns(p.Turns); err != nil {
		return nil, err
	}
	if p.ParentID != "" {
		if _, err := s.Get(ctx, p.ParentID, p.ClientID); err != nil {
			return nil, fmt.Errorf("parent %s: %w", p.ParentID, err)
		}
	}
	now := s.now().UTC()
	t := &Thread{
		ID: uuid.NewString(), ParentID: p.ParentID, CreatedAt: now, UpdatedAt: now,
		ExpiresAt: now.Add(s.ttl), ToolName: p.ToolName, Turns: stamp(p.Turns, now),
		InitialContext: p.InitialContext, ClientID: p.ClientID,
	}
	if err := s.store.Create(ctx, t); err != nil {
		return nil, fmt.Errorf("create thread: %w", err)
	}
	return t, nil
}

// Get returns a live thread the client may read. A malformed id, an expired
// thread and another client's thread all look the same: not found.
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

// Append adds one exchange's turns, all or none, and refreshes the TTL.
func (s *Service) Append(ctx context.Context, id, clientID string, turns []Turn) (int, error) {
	if len(turns) == 0 {
		return 0, fmt.Errorf("%w: no turns to append", ErrInvalid)
	}
	if err := validTurns(turns); err != nil {
		return 0, err
	}
	if _, err := s.Get(ctx, id, clientID); err != nil {
		return 0, err
	}
	now := s.now().UTC()
	return s.store.Append(ctx, id, stamp(turns, now), s.maxTurns, now, now.Add(s.ttl))
}

func validTurns(turns []Turn) error {
	for i, t := range turns {
		if t.Role != RoleUser && t.Role != RoleAssistant {
			return fmt.Errorf("%w: turn %d has no role", ErrInvalid, i)
		}
	}
	return nil
}

// stamp gives turns without a timestamp the write time.
func stamp(turns []Turn, now time.Time) []Turn {
	out := make([]Turn, len(turns))
	for i, t := range turns {
		if t.Timestamp.IsZero() {
			t.Timestamp = now
		}
		out[i] = t
	}
	return out
}
