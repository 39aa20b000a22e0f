// Package memstore keeps threads in process memory. It is ephemeral: what it
// holds is gone when the process stops. Tests and single-shot runs use it.
package memstore

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// sweepEvery bounds how often Create walks the map to drop expired threads,
// so memory held by abandoned threads is returned without a goroutine.
const sweepEvery = time.Minute

// Store is a memory.Store in a map.
type Store struct {
	mu      sync.Mutex
	threads map[string]*memory.Thread
	// exchanges holds each thread's exchange ids, so a retried append is
	// stored once.
	exchanges map[string]map[string]bool
	// files holds each thread's file shas, so an append keeps them alive
	// without walking the thread's turns.
	files     map[string]map[string]bool
	blobs     map[string]blob
	lastSweep time.Time
}

type blob struct {
	memory.Blob
	expires time.Time
}

// New returns an empty store.
func New() *Store {
	return &Store{threads: map[string]*memory.Thread{}, exchanges: map[string]map[string]bool{},
		files: map[string]map[string]bool{}, blobs: map[string]blob{}}
}

var _ memory.Store = (*Store)(nil)

func (s *Store) Create(_ context.Context, t *memory.Thread) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.threads[t.ID]; dup {
		return fmt.Errorf("%w: %s", memory.ErrExists, t.ID)
	}
	if now := t.UpdatedAt; now.Sub(s.lastSweep) > sweepEvery {
		for id, old := range s.threads {
			if !now.Before(old.ExpiresAt) {
				s.drop(id)
			}
		}
		for sha, b := range s.blobs {
			if !now.Before(b.expires) {
				delete(s.blobs, sha)
			}
		}
		s.lastSweep = now
	}
	s.put(t)
	return nil
}

// put stores a copy of t and notes its files.
func (s *Store) put(t *memory.Thread) {
	s.threads[t.ID] = clone(t)
	s.addFiles(t.ID, t.Turns)
}

func (s *Store) addFiles(id string, turns []memory.Turn) {
	for _, turn := range turns {
		for _, f := range turn.Files {
			if s.files[id] == nil {
				s.files[id] = map[string]bool{}
			}
			s.files[id][f.SHA256] = true
		}
	}
}

func (s *Store) Get(_ context.Context, id string, now time.Time) (*memory.Thread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.threads[id]
	if !ok {
		return nil, memory.ErrNotFound
	}
	if !now.Before(t.ExpiresAt) {
		s.drop(id)
		return nil, memory.ErrNotFound
	}
	return clone(t), nil
}

func (s *Store) GetWithin(_ context.Context, id string, now time.Time, max int64) (*memory.Thread, bool,
	error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.threads[id]
	if !ok || !now.Before(t.ExpiresAt) {
		return nil, false, memory.ErrNotFound
	}
	if t.Weight > max {
		head := *t
		head.Turns = nil
		return &head, true, nil
	}
	return clone(t), false, nil
}

func (s *Store) Head(_ context.Context, id string, now time.Time) (*memory.Thread, int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.threads[id]
	if !ok || !now.Before(t.ExpiresAt) {
		return nil, 0, memory.ErrNotFound
	}
	head := *t
	head.Turns = nil
	return &head, len(t.Turns), nil
}

// drop forgets a thread, its exchange ids and its files.
func (s *Store) drop(id string) {
	delete(s.threads, id)
	delete(s.exchanges, id)
	delete(s.files, id)
}

func (s *Store) Append(_ context.Context, id, clientID string, ex memory.Exchange, turns []memory.Turn, maxTurns int,
	now, expiresAt time.Time) (int, error) {
	exchangeID := ex.ID // a set per thread: ex.After is needed only for Unchanged
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.threads[id]
	if !ok || !now.Before(t.ExpiresAt) || t.ClientID != clientID {
		return 0, memory.ErrNotFound
	}
	if exchangeID != "" && s.exchanges[id][exchangeID] {
		return len(t.Turns), nil
	}
	if len(t.Turns)+len(turns) > maxTurns {
		return len(t.Turns), memory.ErrTurnLimit
	}
	if t.Weight+ex.Weight > memory.MaxThreadWeight {
		return len(t.Turns), memory.ErrThreadFull
	}
	if ex.ChecksState() && stateAfter(t.Turns, ex.After, ex.StateOf) {
		return len(t.Turns), memory.ErrMoved
	}
	if exchangeID != "" {
		if s.exchanges[id] == nil {
			s.exchanges[id] = map[string]bool{}
		}
		s.exchanges[id][exchangeID] = true
	}
	t.Turns = append(t.Turns, turns...)
	t.Weight += ex.Weight
	t.UpdatedAt = now
	t.ExpiresAt = expiresAt
	s.addFiles(id, turns)
	for sha := range s.files[id] {
		if b, ok := s.blobs[sha]; ok && b.expires.Before(expiresAt) {
			b.expires = expiresAt
			s.blobs[sha] = b
		}
	}
	return len(t.Turns), nil
}

// stateAfter reports whether a turn from turns[after] on keeps a state of
// tool's.
func stateAfter(turns []memory.Turn, after int, tool string) bool {
	for _, t := range turns[min(max(after, 0), len(turns)):] {
		if t.WorkflowState != nil && t.ToolName == tool {
			return true
		}
	}
	return false
}

func (s *Store) Summaries(ctx context.Context, p memory.ListParams, now time.Time) ([]memory.Summary, error) {
	threads, err := s.list(p, now)
	out := make([]memory.Summary, len(threads))
	for i, t := range threads {
		out[i] = memory.Summarize(t)
	}
	return out, err
}

// list is the threads Summaries summarises.
func (s *Store) list(p memory.ListParams, now time.Time) ([]*memory.Thread, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*memory.Thread
	for _, t := range s.threads {
		if now.Before(t.ExpiresAt) && t.ClientID == p.ClientID && (p.ToolName == "" || t.ToolName == p.ToolName) &&
			p.After.Before(t) {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, memory.Newer)
	out = out[:min(len(out), p.Limit)]
	for i, t := range out {
		out[i] = clone(t)
	}
	return out, nil
}

func (s *Store) ClientWeight(_ context.Context, clientID string, now time.Time) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var w int64
	for _, t := range s.threads {
		if t.ClientID == clientID && now.Before(t.ExpiresAt) {
			w += t.Weight + memory.ThreadOverhead
		}
	}
	return w, nil
}

func (s *Store) Delete(_ context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.threads[id]; !ok {
		return memory.ErrNotFound
	}
	s.drop(id)
	return nil
}

func (s *Store) Import(_ context.Context, threads []*memory.Thread, replace bool, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, t := range threads {
		old, dup := s.threads[t.ID]
		owner := ""
		if dup {
			owner = old.ClientID
		}
		if err := memory.ImportClash(t, owner, dup, replace); err != nil {
			return err
		}
	}
	for _, t := range threads {
		s.drop(t.ID) // an imported thread starts afresh
		s.put(t)
	}
	return nil
}

func (s *Store) SaveBlobs(_ context.Context, blobs []memory.Blob, _, expiresAt time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, b := range blobs {
		if old, ok := s.blobs[b.SHA256]; !ok || old.expires.Before(expiresAt) {
			s.blobs[b.SHA256] = blob{Blob: b, expires: expiresAt}
		}
	}
	return nil
}

func (s *Store) GetBlobs(_ context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]memory.Blob{}
	for _, sha := range shas {
		if b, ok := s.blobs[sha]; ok && now.Before(b.expires) {
			out[sha] = b.Blob
		}
	}
	return out, nil
}

func (s *Store) BlobHeads(_ context.Context, shas []string, now time.Time) (map[string]memory.BlobHead, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]memory.BlobHead{}
	for _, sha := range shas {
		if b, ok := s.blobs[sha]; ok && now.Before(b.expires) {
			out[sha] = memory.BlobHead{Bytes: int64(len(b.Content)), Tokens: b.Tokens}
		}
	}
	return out, nil
}

func (s *Store) Close() error { return nil }

// clone copies the parts a caller could mutate, so callers never share
// slices with the store.
func clone(t *memory.Thread) *memory.Thread {
	c := *t
	c.Turns = append([]memory.Turn(nil), t.Turns...)
	return &c
}
