package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A chunkRow is one kbq_chunk row.
type chunkRow struct {
	path               string
	chunk              int
	heading            string
	lineStart, lineEnd int
	body               string
}

// writeChunks writes rows, those added to t, into kbq_chunk, and the
// texts kbq_text lacks, with their tsvectors, into kbq_text: by COPY, or,
// where the server takes no COPY, by INSERTs that compute them.
func writeChunks(ctx context.Context, tx pgx.Tx, repoID int64, rows []chunkRow, t *texts) error {
	if len(rows) == 0 {
		return nil
	}
	var err error
	if simple(tx) {
		err = insertTexts(ctx, tx, t)
	} else {
		err = copyTexts(ctx, tx, t)
	}
	if err != nil {
		return fmt.Errorf("write the chunks' texts: %w", err)
	}
	if simple(tx) {
		return insertChunks(ctx, tx, repoID, rows, t)
	}
	src := &chunkSource{repoID: repoID, rows: rows, t: t}
	_, err = tx.CopyFrom(ctx, pgx.Identifier{"kbq_chunk"},
		[]string{"repo_id", "path", "chunk", "heading", "line_start", "line_end", "body", "text_key"}, src)
	return err
}

// chunkSource streams rows into COPY.
type chunkSource struct {
	repoID int64
	rows   []chunkRow
	t      *texts
	i      int
}

func (s *chunkSource) Next() bool {
	if s.i >= len(s.rows) {
		return false
	}
	s.i++
	return true
}

func (s *chunkSource) Values() ([]any, error) {
	r := s.rows[s.i-1]
	return []any{s.repoID, r.path, r.chunk, r.heading, r.lineStart, r.lineEnd, r.body, s.t.keys[s.t.of[s.i-1]]}, nil
}

func (s *chunkSource) Err() error { return nil }

// insertChunks writes rows, those added to t, by INSERTs of up to 100:
// for servers that take one session and no COPY.
func insertChunks(ctx context.Context, tx pgx.Tx, repoID int64, rows []chunkRow, t *texts) error {
	for start := 0; start < len(rows); start += 100 {
		part := rows[start:min(start+100, len(rows))]
		sql := []byte(`INSERT INTO kbq_chunk (repo_id, path, chunk, heading, line_start, line_end, body, text_key) VALUES `)
		args := []any{repoID}
		for i, r := range part {
			if i > 0 {
				sql = append(sql, ", "...)
			}
			n := len(args)
			args = append(args, r.path, r.chunk, r.heading, r.lineStart, r.lineEnd, r.body, t.keys[t.of[start+i]])
			sql = fmt.Appendf(sql, "($1, $%d, $%d, $%d, $%d, $%d, $%d, $%d::bytea)", n+1, n+2, n+3, n+4, n+5, n+6, n+7)
		}
		if _, err := tx.Exec(ctx, string(sql), args...); err != nil {
			return err
		}
	}
	return nil
}
