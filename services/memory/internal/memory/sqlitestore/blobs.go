package sqlitestore

import (
	"context"
	"database/sql"
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
			if _, err := exec(ctx, s.writes.saveBlob, b.SHA256, string(counts), nanos(expiresAt),
				len(b.Content)); err != nil {
				return err
			}
			if _, err := exec(ctx, s.writes.saveContent, b.SHA256, b.Content); err != nil {
				return err
			}
		}
		return nil
	})
}

// getBlobs takes the shas as one JSON array, so that one prepared
// statement serves any number of them.
const getBlobs = `SELECT b.sha256, c.content, b.tokens FROM blobs b JOIN blob_contents c ON c.sha256 = b.sha256
	WHERE b.sha256 IN (SELECT value FROM json_each(?)) AND b.expires_at > ?`

// blobHeads reads blobs' rows alone, which hold no content.
const blobHeads = `SELECT sha256, bytes, tokens FROM blobs
	WHERE sha256 IN (SELECT value FROM json_each(?)) AND expires_at > ?`

func (s *Store) BlobHeads(ctx context.Context, shas []string, now time.Time) (map[string]memory.BlobHead, error) {
	out := map[string]memory.BlobHead{}
	err := s.blobRows(ctx, blobHeads, shas, now, func(rows *sql.Rows) error {
		var sha, counts string
		var h memory.BlobHead
		err := rows.Scan(&sha, &h.Bytes, &counts)
		if err != nil {
			return err
		}
		h.Tokens, err = decodeCounts(sha, counts)
		out[sha] = h
		return err
	})
	return out, err
}

func (s *Store) GetBlobs(ctx context.Context, shas []string, now time.Time) (map[string]memory.Blob, error) {
	out := map[string]memory.Blob{}
	err := s.blobRows(ctx, getBlobs, shas, now, func(rows *sql.Rows) error {
		var b memory.Blob
		var counts string
		err := rows.Scan(&b.SHA256, &b.Content, &counts)
		if err != nil {
			return err
		}
		b.Tokens, err = decodeCounts(b.SHA256, counts)
		out[b.SHA256] = b
		return err
	})
	return out, err
}

// blobRows runs query, one of the blob reads above, for the live blobs
// among shas, and hands each row to scan.
func (s *Store) blobRows(ctx context.Context, query string, shas []string, now time.Time,
	scan func(*sql.Rows) error) error {
	if len(shas) == 0 {
		return nil
	}
	list, err := json.Marshal(shas)
	if err != nil {
		return fmt.Errorf("encode file hashes: %w", err)
	}
	release, err := s.reads.take(ctx)
	if err != nil {
		return err
	}
	defer release()
	return s.query(statementContext(ctx), query, []any{string(list), nanos(now)}, scan)
}

// decodeCounts decodes a blob's token counts, as its row holds them.
func decodeCounts(sha, counts string) (map[string]int64, error) {
	var m map[string]int64
	if err := json.Unmarshal([]byte(counts), &m); err != nil {
		return nil, fmt.Errorf("blob %s: decode token counts: %w", sha, err)
	}
	return m, nil
}
