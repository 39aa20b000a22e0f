package sqlitestore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/zenmcp/zen/services/memory/internal/memory"
)

// threadHead are the columns scanThread reads before the thread's initial
// context.
const threadHead = `id, parent_id, tool_name, client_id, created_at, updated_at, expires_at`

// threadColumns are the columns scanThread reads: the head, then the
// initial context, which the thread's row holds, or, past inlineContext,
// initial_contexts (the row holding ”).
const threadColumns = threadHead + `, CASE initial_context WHEN '' THEN
	(SELECT body FROM initial_contexts WHERE thread_id = threads.id) ELSE initial_context END`

// listQuery selects columns of the live threads p names, newest first. Its
// text depends only on which filters are set, so a few prepared statements
// serve every listing.
func listQuery(columns string, p memory.ListParams, now time.Time) (string, []any) {
	query := `SELECT ` + columns + ` FROM threads WHERE client_id = ? AND expires_at > ?`
	args := []any{p.ClientID, nanos(now)}
	if p.ToolName != "" {
		query += ` AND tool_name = ?`
		args = append(args, p.ToolName)
	}
	if p.After != nil {
		query += ` AND (updated_at < ? OR (updated_at = ? AND id < ?))`
		args = append(args, nanos(p.After.UpdatedAt), nanos(p.After.UpdatedAt), p.After.ID)
	}
	return query + ` ORDER BY updated_at DESC, id DESC LIMIT ?`, append(args, p.Limit)
}

// previewOfTurns is memory.FirstPrompt in SQL, read from the turns of a
// thread written before threads kept their preview: the content of the
// first user turn among the first two (role 1 is memory.RoleUser), cut as
// memory.Preview cuts it (SQLite's substr and length count characters, as
// Go's runes). Its turn is read whole, as before.
var previewOfTurns = fmt.Sprintf(`(SELECT substr(c, 1, %[1]d) || CASE WHEN length(c) > %[1]d THEN '…' ELSE '' END
	FROM (SELECT json_extract(body, '$.content') AS c FROM turns WHERE thread_id = threads.id AND seq < 2
		AND json_extract(body, '$.role') = 1 ORDER BY seq LIMIT 1))`, memory.PreviewRunes)

func (s *Store) Summaries(ctx context.Context, p memory.ListParams, now time.Time) ([]memory.Summary, error) {
	release, err := s.reads.take(ctx)
	if err != nil {
		return nil, err
	}
	defer release()
	// A listing shows no initial context: it is not read.
	query, args := listQuery(threadHead+`, 'null', turn_count, coalesce(preview, `+previewOfTurns+`, '')`, p, now)
	var out []memory.Summary
	err = s.query(ctx, query, args, func(rows *sql.Rows) error {
		var sum memory.Summary
		t, err := scanThread(scanFunc(func(dest ...any) error {
			return rows.Scan(append(dest, &sum.TurnCount, &sum.FirstPrompt)...)
		}))
		if err != nil {
			return err
		}
		sum.Thread = *t
		out = append(out, sum)
		return nil
	})
	return out, err
}

func (s *Store) ClientWeight(ctx context.Context, clientID string, now time.Time) (int64, error) {
	release, err := s.reads.take(ctx)
	if err != nil {
		return 0, err
	}
	defer release()
	var w int64
	err = s.query(ctx, `SELECT coalesce(sum(weight), 0) + count(*) * ? FROM threads WHERE client_id = ? AND
		expires_at > ?`, []any{memory.ThreadOverhead, clientID, nanos(now)},
		func(rows *sql.Rows) error { return rows.Scan(&w) })
	return w, err
}

type scanFunc func(...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// query calls fn on each row of a query.
func (s *Store) query(ctx context.Context, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := s.reads.query(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return describe(err)
		}
	}
	return describe(rows.Err())
}
