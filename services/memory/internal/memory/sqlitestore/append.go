package sqlitestore

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// errRetry rolls back an append whose exchange the thread already holds:
// a retry changes nothing, not even the expiry, and is answered with the
// turn count the transaction saw.
var errRetry = errors.New("sqlitestore: the exchange is stored already")

// Append writes the new turns and moves the thread's row on, in at most
// three statements: the row's UPDATE checks the owner, the expiry and the
// turn limit and returns what the turns need (their first seq, the
// revision); a read of the turns stored since the call was prepared
// (ex.After), when there are any, tells whether they hold the exchange
// already (holds); and the turns go in one INSERT, the first named by the
// exchange. It reads nothing else of what the thread held: it costs what
// it appends. Once they are committed, it adds the turns to the ones this
// process keeps of the thread, so that the next read, a continued call's,
// decodes none.
//
// An UPDATE that finds no row to move is told apart (why) only then: an
// unknown or expired thread, the turn limit, or a retry of an exchange
// the full thread holds.
func (s *Store) Append(ctx context.Context, id, clientID string, ex memory.Exchange, turns []memory.Turn,
	maxTurns int, now, expiresAt time.Time) (int, error) {
	var count int
	var rev string
	var stored bool
	err := s.write(ctx, func(ctx context.Context) error {
		stored = false // a write may run again (writer.go): only the run that commits counts
		moved, err := s.advance(ctx, id, clientID, ex.Weight, turns, maxTurns, now, expiresAt)
		if errors.Is(err, sql.ErrNoRows) {
			count, err = s.why(ctx, id, clientID, ex, len(turns), maxTurns, now)
			return err
		}
		if err != nil {
			return err
		}
		count, rev = moved.count, moved.rev
		first := count - len(turns)
		held, err := s.holds(ctx, id, ex, first)
		if err != nil {
			return err
		}
		if held {
			count = first // what the thread holds once the UPDATE is undone
			return errRetry
		}
		if moved, err := s.stateMoved(ctx, id, ex, first); err != nil || moved {
			count = first
			return cmp.Or(err, memory.ErrMoved)
		}
		if err := s.insertTurns(ctx, id, first, ex.ID, turns); err != nil {
			return err
		}
		if moved.keepFiles != 0 {
			if _, err := exec(ctx, s.writes.keepFiles, moved.keepFiles, id); err != nil {
				return err
			}
		}
		stored = true
		return nil
	})
	if errors.Is(err, errRetry) {
		return count, nil
	}
	if err == nil && stored {
		s.cache.Appended(id, rev, count-len(turns), "", turns, "") // counted by the row: no tail to check
	}
	return count, err
}

// advanced is what an append's UPDATE of the thread's row answers.
type advanced struct {
	count int    // the thread's turns, the new ones included
	rev   string // the thread's revision
	// keepFiles, when set, is how long the thread's files are now to be
	// kept (Unix ns): the append brings files, or theirs run out first.
	keepFiles int64
}

// advance moves the thread's row on by turns, which weigh weight, when the
// client's thread is live and has room for them (else sql.ErrNoRows), and
// records the move for the rows the store keeps.
func (s *Store) advance(ctx context.Context, id, clientID string, weight int64, turns []memory.Turn, maxTurns int,
	now, expiresAt time.Time) (advanced, error) {
	files := false
	for _, t := range turns {
		files = files || len(t.Files) > 0
	}
	// The thread's files are kept a quarter of its lifetime past it, so that
	// the appends in that time need not touch them: each would rewrite every
	// file's row. New files start the count again.
	keepUntil := nanos(expiresAt.Add(expiresAt.Sub(now) / 4))
	var moved advanced
	var filesKept, weighs int64
	err := s.writes.advance.QueryRowContext(ctx, len(turns), nanos(now), nanos(expiresAt), files, keepUntil,
		id, clientID, maxTurns, weight, memory.MaxThreadWeight, memory.FirstPrompt(turns),
		memory.FirstPromptAfter(turns)).
		Scan(&moved.count, &filesKept, &moved.rev, &weighs)
	if errors.Is(err, sql.ErrNoRows) {
		return advanced{}, err
	}
	if err != nil {
		return advanced{}, describe(err)
	}
	if filesKept == keepUntil {
		moved.keepFiles = keepUntil
	}
	// As the file gives them back: in UTC, to the nanosecond, without a monotonic reading.
	s.rows.change(rowChange{id: id, moved: true, count: moved.count, weight: weighs, updated: fromNanos(nanos(now)),
		expires: fromNanos(nanos(expiresAt))})
	return moved, nil
}

// holds reports whether the thread's first count turns hold exchange ex:
// those from ex.After on, where an earlier attempt of it would have begun,
// or the exchanges an older version recorded apart. When no turn came
// after ex.After, no attempt was stored (an older version's record came
// with its turns too), and nothing need be read: the usual append.
func (s *Store) holds(ctx context.Context, id string, ex memory.Exchange, count int) (bool, error) {
	if ex.ID == "" || count <= ex.After {
		return false, nil
	}
	var held bool
	err := s.writes.holds.QueryRowContext(ctx, id, ex.ID, ex.After, count).Scan(&held)
	return held, describe(err)
}

// stateMoved reports whether a workflow's step that was to follow the
// state its call saw (ex.Unchanged) finds another state of its tool among
// the thread's first count turns, after the ex.After its call saw. Only
// when turns came after those is anything read.
func (s *Store) stateMoved(ctx context.Context, id string, ex memory.Exchange, count int) (bool, error) {
	if !ex.ChecksState() || count <= ex.After {
		return false, nil
	}
	var moved bool
	err := s.writes.stateAfter.QueryRowContext(ctx, id, ex.After, count, ex.StateOf).Scan(&moved)
	return moved, describe(err)
}

// why is the outcome of an append of added turns whose thread did not
// move on: the thread's turn count for a retry, else what refused it (with
// the count, for a full thread: the turn limit, else its weight).
func (s *Store) why(ctx context.Context, id, clientID string, ex memory.Exchange, added, maxTurns int,
	now time.Time) (int, error) {
	var count int
	var expires int64
	err := s.writes.head.QueryRowContext(ctx, id, clientID).Scan(&count, &expires)
	if errors.Is(err, sql.ErrNoRows) || err == nil && expires <= nanos(now) {
		return 0, memory.ErrNotFound
	}
	if err != nil {
		return 0, describe(err)
	}
	held, err := s.holds(ctx, id, ex, count)
	if err != nil {
		return 0, err
	}
	if held {
		return count, nil // the full thread holds it: the retry is answered
	}
	if count+added > maxTurns {
		return count, memory.ErrTurnLimit
	}
	return count, memory.ErrThreadFull
}
