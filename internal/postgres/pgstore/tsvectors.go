package pgstore

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// tsvectorSQL is how a chunk's tsvector is computed, by the server, so
// that plain SQL clients query it with the server's own parser and
// english dictionary, whatever its version and configuration
// (docs/postgres.md).
const tsvectorSQL = `to_tsvector('english', %[1]s || ' ' || %[2]s)`

// tsvectorHelpers is how many extra sessions have the server compute
// tsvectors while the publishing one writes. The parser and stemmer are
// most of a first publish's server time (docs/postgres.md, "Publishing"),
// and one session runs on one core.
const tsvectorHelpers = 3

// tsvectorBatch is how many texts a helper looks up or computes at a time.
const tsvectorBatch = 400

type tsvectorWork struct {
	texts []chunkText
	keys  [][]byte
	out   chan tsvectorResult
}

// tsvectorResult holds, for each text of a batch, its tsvector in
// tsvectorsend's binary form, or nil where kbq_text held it.
type tsvectorResult struct {
	vecs [][]byte
	err  error
}

// tsvectors returns, once the helpers are done, the tsvector of each text
// kbq_text did not hold, and nil for those it did.
func (t *texts) tsvectors(ctx context.Context, tx pgx.Tx) ([][]byte, error) {
	t.finish()
	for _, w := range t.pending {
		w.out <- computeTSVectors(ctx, tx.Conn(), w.texts, w.keys)
	}
	vecs := make([][]byte, 0, len(t.texts))
	for _, b := range t.batches {
		r := <-b
		if r.err != nil {
			return nil, r.err
		}
		vecs = append(vecs, r.vecs...)
	}
	return vecs, nil
}

// computeTSVectors has the server compute the tsvectors of rows, whose
// keys are keys, in tsvectorsend's binary form: nil for those kbq_text
// holds. Without keys, it computes them all.
func computeTSVectors(ctx context.Context, conn *pgx.Conn, rows []chunkText, keys [][]byte) tsvectorResult {
	fail := func(err error) tsvectorResult { return tsvectorResult{err: fmt.Errorf("compute tsvectors: %w", err)} }
	r := tsvectorResult{vecs: make([][]byte, len(rows))}
	var server []int // the rows the server computes
	if keys != nil {
		held, err := heldTexts(ctx, conn, keys)
		if err != nil {
			return fail(err)
		}
		for i := range rows {
			if !held[i] {
				server = append(server, i)
			}
		}
	} else {
		for i := range rows {
			server = append(server, i)
		}
	}
	if len(server) == 0 {
		return r
	}
	headings, bodies := make([]string, len(server)), make([]string, len(server))
	for j, i := range server {
		headings[j], bodies[j] = rows[i].heading, rows[i].body
	}
	q, err := conn.Query(ctx, `SELECT tsvectorsend(`+fmt.Sprintf(tsvectorSQL, "c.heading", "c.body")+`)
		FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS c (heading, body, n) ORDER BY n`, headings, bodies)
	if err != nil {
		return fail(err)
	}
	j := 0
	for q.Next() {
		var v []byte
		if err := q.Scan(&v); err != nil {
			q.Close()
			return fail(err)
		}
		if j < len(server) {
			r.vecs[server[j]] = v
		}
		j++
	}
	if err := q.Err(); err != nil {
		return fail(err)
	}
	if j != len(server) {
		return fail(fmt.Errorf("%d for %d chunks", j, len(server)))
	}
	return r
}

// heldTexts reports, for each key, whether kbq_text holds its text.
func heldTexts(ctx context.Context, conn *pgx.Conn, keys [][]byte) ([]bool, error) {
	q, err := conn.Query(ctx, `SELECT EXISTS (SELECT 1 FROM kbq_text k WHERE k.key = c.key)
		FROM unnest($1::bytea[]) WITH ORDINALITY AS c (key, n) ORDER BY n`, keys)
	if err != nil {
		return nil, err
	}
	held, err := pgx.CollectRows(q, pgx.RowTo[bool])
	if err != nil {
		return nil, err
	}
	if len(held) != len(keys) {
		return nil, fmt.Errorf("%d answers for %d texts", len(held), len(keys))
	}
	return held, nil
}
