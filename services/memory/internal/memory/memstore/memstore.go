// Package memstore keeps threads in process memory. It is ephemeral: what it
// holds is gone when the process stops. Tests and single-shot runs use it.
package memstore

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// sweepEvery bounds how often Create walks the map to drop expired threads,
// so memory held by abandoned threads is returned without a goroutine.
const sweepEvery = time.Minute

// Store is a memory.Store in a map.
type Store struct {
	mu        sync.Mutex
	threads   map[string]*memory.Thread
	lastSweep time.Time
}

// New returns an empty store.
func New() *Store { return &Store{threads: map[string]*memory.Thread{}} }

var _ memory.Store = (*Store)(nil)

func (s *Store) Create(_ context.Context, t *memory.Thread) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.threads[t.ID]; dup {
		return fmt.Errorf("thread %s already exists", t.ID)
	}
	if now := t.UpdatedAt; now.Sub(s.lastSweep) > sweepEvery {
		for id, old := range s.threads {
			if !now.Before(old.ExpiresAt) {
				delete(s.threads, id)
			}
		}
		s.lastSweep = now
	}
	s.threads[t.ID] = clone(t)
	return nil
}

func (s *Store) Get(_ context.Context, id string, now time.Time) (*memory.Thread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.threads[id]
	if !ok {
		return nil, memory.ErrNotFound
	}
	if !now.Before(t.ExpiresAt) {
		delete(s.threads, id)
		return nil, memory.ErrNotFound
	}
	return clone(t), nil
}

func (s *Store) Append(_ context.Context, id string, turns []memory.Turn, maxTurns int, now, expiresAt time.Time) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.threads[id]
	if !ok || !now.Before(t.ExpiresAt) {
		delete(s.threads, id)
		return 0, memory.ErrNotFound
	}
	if len(t.Turns)+len(turns) > maxTurns {
		return len(t.Turns), memory.ErrTurnLimit
	}
	t.Turns = append(t.Turns, turns...)
	t.UpdatedAt = now
	t.ExpiresAt = expiresAt
	return len(t.Turns), nil
}

func (s *Store) Close() error { return nil }

// clone copies the parts a caller could mutate, so callers never share
// slices with the store.
func clone(t *memory.Thread) *memory.Thread {
	c := *t
	c.Turns = append([]memory.Turn(nil), t.Turns...)
	return &c
}
