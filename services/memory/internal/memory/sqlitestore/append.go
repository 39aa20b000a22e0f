package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// Append reads only the thread's row (owner, expiry, turn count, revision)
// and writes the new turns: it costs what it appends, whatever the thread
// holds. Once they are committed, it adds them to the turns this process
// keeps of the thread, so that the next read, a continued call's, decodes
// none.
func (s *Store) Append(ctx context.Context, id, clientID, exchangeID string, turns []memory.Turn, maxTurns int,
	now, expiresAt time.Time) (int, error) {
	var count int
	var rev string
	var bodies [][]byte
	err := s.write(ctx, func(ctx context.Context) error {
		bodies = nil // a write may run again (writer.go): only the run that commits counts
		var expires, filesKept int64
		err := s.writes.head.QueryRowContext(ctx, id, clientID).Scan(&count, &expires, &filesKept, &rev)
		if errors.Is(err, sql.ErrNoRows) || err == nil && expires <= nanos(now) {
			return memory.ErrNotFound
		}
		if err != nil {
			return describe(err)
		}
		if retry, err := s.seen(ctx, id, exchangeID); err != nil || retry {
			return err // a retry changes nothing, not even the expiry
		}
		if count+len(turns) > maxTurns {
			return memory.ErrTurnLimit
		}
		var files bool
		if bodies, files, err = s.insertTurns(ctx, id, count, turns); err != nil {
			return err
		}
		count += len(turns)
		// The thread's files are kept a quarter of its lifetime past it, so
		// that the appends in that time need not touch them: each would
		// rewrite every file's row. New files start the count again.
		if files || filesKept < nanos(expiresAt) {
			filesKept = nanos(expiresAt.Add(expiresAt.Sub(now) / 4))
			if _, err := exec(ctx, s.writes.keepFiles, filesKept, id); err != nil {
				return err
			}
		}
		_, err = exec(ctx, s.writes.updateThread, count, nanos(now), nanos(expiresAt), filesKept, id)
		return err
	})
	if err == nil && bodies != nil {
		s.cache.Appended(id, rev, count-len(turns), turns)
	}
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
