package sqlitestore

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

func (s *Store) Append(ctx context.Context, id, clientID, exchangeID string, turns []memory.Turn, maxTurns int,
	now, expiresAt time.Time) (int, error) {
	var count int
	err := s.write(ctx, func(tx *sql.Tx) error {
		var expires int64
		err := tx.QueryRowContext(ctx, `SELECT turn_count, expires_at FROM threads WHERE id = ? AND client_id = ?`,
			id, clientID).Scan(&count, &expires)
		if errors.Is(err, sql.ErrNoRows) || err == nil && expires <= nanos(now) {
			return memory.ErrNotFound
		}
		if err != nil {
			return describe(err)
		}
		if retry, err := seen(ctx, tx, id, exchangeID); err != nil || retry {
			return err // a retry changes nothing, not even the expiry
		}
		if count+len(turns) > maxTurns {
			return memory.ErrTurnLimit
		}
		if err := insertTurns(ctx, tx, id, count, turns); err != nil {
			return err
		}
		count += len(turns)
		_, err = tx.ExecContext(ctx, `UPDATE threads SET turn_count = ?, updated_at = ?, expires_at = ? WHERE id = ?`,
			count, nanos(now), nanos(expiresAt), id)
		if err != nil {
			return describe(err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE blobs SET expires_at = max(expires_at, ?)
			WHERE sha256 IN (SELECT sha256 FROM thread_files WHERE thread_id = ?)`, nanos(expiresAt), id)
		return describe(err)
	})
	return count, err
}

// seen reports whether the thread already holds the exchange, and records
// it when it does not: the transaction stores its turns or rolls back.
func seen(ctx context.Context, tx *sql.Tx, id, exchangeID string) (bool, error) {
	if exchangeID == "" {
		return false, nil
	}
	res, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO exchanges (thread_id, exchange_id) VALUES (?, ?)`,
		id, exchangeID)
	if err != nil {
		return false, describe(err)
	}
	n, err := res.RowsAffected()
	return n == 0, describe(err)
}
