package sqlitestore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

func (s *Store) SaveBlobs(ctx context.Context, blobs []memory.Blob, _, expiresAt time.Time) error {
	if len(blobs) == 0 {
		return nil
	}
	return s.write(ctx, func(ctx context.Context) error {
		for _, b := range blobs {
			counts, err := json.Marshal(b.Tokens)
			if err != nil {
				return fmt.Errorf("encode token counts: %w", err)
			}
			if _, err := exec(ctx, s.writes.saveBlob, b.SHA256, b.Content, string(counts), nanos(expiresAt)); err != nil {
				return err
			}
		}
		return nil
	})
}

// getBlobs takes the shas as one JSON array, so that one prepared
// statement serves any number of them.
const getBlobs = `SELECT sha256, content, tokens FROM blobs
	WHERE sha256 IN (SELECT value FROM json_each(?)) AND expires_at > ?`

func (s *Store) GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	out := map[string]memory.Blob{}
	if len(shas) == 0 {
		return out, nil
	}
	list, err := json.Marshal(shas)
	if err != nil {
		return nil, fmt.Errorf("encode file hashes: %w", err)
	}
	release, err := s.reads.take(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	rows, err := s.reads.query(statementContext(ctx), getBlobs, string(list), nanos(now))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var b memory.Blob
		var counts string
		if err := rows.Scan(&b.SHA256, &b.Content, &counts); err != nil {
			return nil, describe(err)
		}
		if err := json.Unmarshal([]byte(counts), &b.Tokens); err != nil {
			return nil, fmt.Errorf("blob %s: decode token counts: %w", b.SHA256, err)
		}
		out[b.SHA256] = b
	}
	return out, describe(rows.Err())
}
