package memory

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/google/uuid"
)

// MaxChainDepth bounds how many threads a chain holds (ReadChain), the thread
// read included: 19 ancestors at most.
const MaxChainDepth = 20

// MaxChainWeight bounds what a thread and the ancestors a read follows
// weigh together: every thread may weigh MaxThreadWeight, and a chain of
// MaxChainDepth such threads, each an import naming the one before as its
// parent, took one read 673 MB. Twice one thread's bound reads the whole
// of a branch of a full thread.
const MaxChainWeight = 2 * MaxThreadWeight

// LastModelOf is the model of the newest turn along a chain that names one.
func LastModelOf(chain []*Thread) string { return lastModelTurn(chain).ModelName }

// lastModelTurn is the newest turn along a chain that names its model: an
// assistant's, the model that answered; or a workflow step's own, the
// model the step was called with, which a step without an expert's answer
// has alone. The zero Turn when there is none.
func lastModelTurn(chain []*Thread) Turn {
	for i := len(chain) - 1; i >= 0; i-- {
		turns := chain[i].Turns
		for j := len(turns) - 1; j >= 0; j-- {
			if turns[j].ModelName != "" {
				return turns[j]
			}
		}
	}
	return Turn{}
}

// Admit makes room for a read of threads that weigh weight together
// (Thread.Weight) before they are read, or says why it cannot. Called
// again, it makes room for the new weight in place of the old. The room is
// its caller's to give back once it is done with what was read. A nil
// Admit admits every read.
type Admit func(ctx context.Context, weight int64) error

func admitted(ctx context.Context, admit Admit, weight int64) error {
	if admit == nil {
		return nil
	}
	return admit(ctx, weight)
}

// guessedWeight is the room a read makes before it knows what its thread
// weighs. Most threads weigh less, and are read in one store read; a
// heavier one is read by its head alone (Store.GetWithin), and room is
// made for all of it before it is read whole.
const guessedWeight = 1 << 20

// ReadChain reads the client's thread id and the ancestors a read of it
// follows, oldest first, the thread last: at most MaxChainDepth threads
// weighing at most MaxChainWeight together, stopping at a missing
// ancestor, a cycle, an ancestor of another client (a chain never shows
// one client another's turns, however the parent link came to be: an
// import names any parent it likes), or one that would take the chain past
// its weight, which is weighed by its head before it is read (ancestors).
// It reads them within the room admit makes for what they weigh together.
// It makes room for guessedWeight first: a thread without ancestors that
// fits is read in one store read. A thread found heavier than its room, by
// its head (its turns unread), gets room for its weight and its ancestors'
// by their heads, and is read again within it; each ancestor is read
// within what is left, so that a thread written anew meanwhile, heavier,
// is never read past its room: it is read again, up to weighAttempts
// times, and an ancestor grown past what is left ends the chain there.
func (s *Service) ReadChain(ctx context.Context, id, clientID string, admit Admit) ([]*Thread, error) {
	return s.readWithin(ctx, id, clientID, admit, true)
}

// ReadAlone reads the client's thread id whole, without its ancestors,
// within the room admit makes for it, as ReadChain does.
func (s *Service) ReadAlone(ctx context.Context, id, clientID string, admit Admit) (*Thread, error) {
	chain, err := s.readWithin(ctx, id, clientID, admit, false)
	if err != nil {
		return nil, err
	}
	return chain[0], nil
}

// readWithin is ReadChain, following the thread's ancestors or not.
func (s *Service) readWithin(ctx context.Context, id, clientID string, admit Admit, follow bool) ([]*Thread,
	error) {
	if _, err := uuid.Parse(id); err != nil {
		return nil, ErrNotFound // before any wait for room
	}
	room := int64(guessedWeight)
	for range weighAttempts {
		if err := admitted(ctx, admit, room); err != nil {
			return nil, err
		}
		t, heavier, err := s.store.GetWithin(ctx, id, s.now(), room)
		if err != nil {
			return nil, err
		}
		if t.ClientID != clientID {
			return nil, ErrNotFound
		}
		heads, weight := []*Thread(nil), t.Weight
		if follow {
			if heads, weight, err = s.ancestors(ctx, t); err != nil {
				return nil, err
			}
		}
		if heavier || weight > room {
			// Read again within room for all of it: t, in hand, would be
			// held while the read waits for room.
			room = weight
			continue
		}
		return s.readAncestors(ctx, t, heads, room)
	}
	return nil, fmt.Errorf("%w: thread %s kept changing while memory read it: try again", ErrUnavailable, id)
}

// weighAttempts bounds how often a read makes room anew for a thread that
// turned out heavier than its room.
const weighAttempts = 3

// ancestors are the heads of the ancestors a read of t follows, nearest
// first (ReadChain says which), and what they weigh with t: read by their
// heads alone, so that a chain is weighed before anything heavy is read.
func (s *Service) ancestors(ctx context.Context, t *Thread) ([]*Thread, int64, error) {
	var heads []*Thread
	seen := map[string]bool{t.ID: true}
	weight := t.Weight
	for cur := t; cur.ParentID != "" && len(heads)+1 < MaxChainDepth && !seen[cur.ParentID]; {
		head, _, err := s.store.Head(ctx, cur.ParentID, s.now())
		if errors.Is(err, ErrNotFound) {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("weigh ancestor %s: %w", cur.ParentID, err)
		}
		if head.ClientID != t.ClientID || weight+head.Weight > MaxChainWeight {
			break
		}
		weight += head.Weight
		seen[head.ID] = true
		heads = append(heads, head)
		cur = head
	}
	return heads, weight, nil
}

// readAncestors reads whole the ancestors of t whose heads ancestors read,
// within room (what t and they weighed), and returns them and t, oldest
// first: up to one written anew since its head was read as another
// client's, past what is left of the room, past the chain's weight, or
// with another parent.
func (s *Service) readAncestors(ctx context.Context, t *Thread, heads []*Thread, room int64) ([]*Thread, error) {
	chain := []*Thread{t}
	weight := t.Weight
	for _, head := range heads {
		parent, heavier, err := s.store.GetWithin(ctx, head.ID, s.now(), room-weight)
		if errors.Is(err, ErrNotFound) || heavier { // lost ones too: the chain ends there
			break
		}
		if err != nil {
			return nil, fmt.Errorf("load ancestor %s: %w", head.ID, err)
		}
		if weight += parent.Weight; parent.ClientID != t.ClientID || weight > MaxChainWeight ||
			parent.ParentID != head.ParentID {
			break
		}
		chain = append(chain, parent)
	}
	slices.Reverse(chain)
	return chain, nil
}
