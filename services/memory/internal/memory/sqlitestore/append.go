package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// errRetry rolls back an append whose exchange the thread already holds:
// a retry changes nothing, not even the expiry.
var errRetry = errors.New("sqlitestore: the exchange is stored already")

// Append writes the new turns and moves the thread's row on, in three
// statements: the row's UPDATE checks the owner, the expiry and the turn
// limit and returns what the turns need (their first seq, the revision),
// the exchange id is recorded, and the turns go in one INSERT. It reads
// nothing of what the thread held: it costs what it appends. Once they are
// committed, it adds the turns to the ones this process keeps of the
// thread, so that the next read, a continued call's, decodes none.
//
// An UPDATE that finds no row to move is told apart (why) only then: an
// unknown or expired thread, the turn limit, or a retry of an exchange
// the full thread holds.
func (s *Store) Append(ctx context.Context, id, clientID, exchangeID string, turns []memory.Turn, maxTurns int,
	now, expiresAt time.Time) (int, error) {
	files := false
	for _, t := range turns {
		files = files || len(t.Files) > 0
	}
	// The thread's files are kept a quarter of its lifetime past it, so that
	// the appends in that time need not touch them: each would rewrite every
	// file's row. New files start the count again.
	keepUntil := nanos(expiresAt.Add(expiresAt.Sub(now) / 4))
	var count int
	var rev string
	var stored bool
	err := s.write(ctx, func(ctx context.Context) error {
		stored = false // a write may run again (writer.go): only the run that commits counts
		var filesKept int64
		err := s.writes.advance.QueryRowContext(ctx, len(turns), nanos(now), nanos(expiresAt), files, keepUntil,
			id, clientID, maxTurns).Scan(&count, &filesKept, &rev)
		if errors.Is(err, sql.ErrNoRows) {
			count, err = s.why(ctx, id, clientID, exchangeID, now)
			return err
		}
		if err != nil {
			return describe(err)
		}
		if retry, err := s.seen(ctx, id, exchangeID); err != nil || retry {
			return errors.Join(err, errIf(retry))
		}
		if err := s.insertTurns(ctx, id, count-len(turns), turns); err != nil {
			return err
		}
		if filesKept == keepUntil {
			if _, err := exec(ctx, s.writes.keepFiles, filesKept, id); err != nil {
				return err
			}
		}
		stored = true
		return nil
	})
	if errors.Is(err, errRetry) {
		return s.turnCount(ctx, id, clientID, now)
	}
	if err == nil && stored {
		s.cache.Appended(id, rev, count-len(turns), turns)
	}
	return count, err
}

func errIf(retry bool) error {
	if retry {
		return errRetry
	}
	return nil
}

// why is the outcome of an append whose thread did not move on: the
// thread's turn count for a retry, else what refused it (with the count,
// for a full thread).
func (s *Store) why(ctx context.Context, id, clientID, exchangeID string, now time.Time) (int, error) {
	var count int
	var expires int64
	err := s.writes.head.QueryRowContext(ctx, id, clientID).Scan(&count, &expires)
	if errors.Is(err, sql.ErrNoRows) || err == nil && expires <= nanos(now) {
		return 0, memory.ErrNotFound
	}
	if err != nil {
		return 0, describe(err)
	}
	if exchangeID != "" {
		err := s.writes.hasExchange.QueryRowContext(ctx, id, exchangeID).Scan(new(int))
		if err == nil {
			return count, nil // the full thread holds it: the retry is answered
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return 0, describe(err)
		}
	}
	return count, memory.ErrTurnLimit
}

// turnCount is the thread's turn count, as a retry answers it.
func (s *Store) turnCount(ctx context.Context, id, clientID string, now time.Time) (int, error) {
	var count int
	err := s.write(ctx, func(ctx context.Context) error {
		var err error
		count, err = s.why(ctx, id, clientID, "", now)
		if errors.Is(err, memory.ErrTurnLimit) {
			err = nil // no exchange asked about: the thread is there
		}
		return err
	})
	return count, err
}

// seen reports whether the thread already holds the exchange, and records
// it when it does not: the transaction stores its turns or rolls back.
func (s *Store) seen(ctx context.Context, id, exchangeID string) (bool, error) {
	if exchangeID == "" {
		return false, nil
	}
	res, err := exec(ctx, s.writes.addExchange, id, exchangeID)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 0, describe(err)
}
