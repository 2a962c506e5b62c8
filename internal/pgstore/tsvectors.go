package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"sync/atomic"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/internal/pgtsv"
)

// tsvectorSQL is how a chunk's tsvector is computed, so that plain SQL
// clients query it with the server's own parser and english dictionary
// (docs/postgres.md). kbc computes the same itself where it can (package
// pgtsv), and checks that it does against the server.
const tsvectorSQL = `to_tsvector('english', %[1]s || ' ' || %[2]s)`

// sampleEvery is how often kbc has the server compute a tsvector it
// computed too, to compare: one text in sampleEvery.
const sampleEvery = 50

// tsvectorHelpers is how many extra sessions compute tsvectors while the
// publishing one writes. The parser and stemmer are most of a first
// publish's server time (docs/postgres.md, "Publishing"), and one
// session runs on one core.
const tsvectorHelpers = 3

// tsvectorBatch is how many texts a helper looks up or computes at a time.
const tsvectorBatch = 400

type tsvectorWork struct {
	texts []chunkText
	keys  [][]byte
	out   chan tsvectorResult
}

// tsvectorResult holds, for each text of a batch, its tsvector in
// tsvectorsend's binary form, or nil where kbq_text held it, and whether
// kbc computed it.
type tsvectorResult struct {
	vecs  [][]byte
	local []bool
	err   error
}

// tsvectors returns, once the helpers are done, the tsvector of each text
// kbq_text did not hold, and nil for those it did.
func (t *texts) tsvectors(ctx context.Context, tx pgx.Tx) ([][]byte, error) {
	t.finish()
	enc := t.encoder()
	for _, w := range t.pending {
		w.out <- computeTSVectors(ctx, tx.Conn(), w.texts, w.keys, enc, &t.differs)
	}
	vecs := make([][]byte, 0, len(t.texts))
	var local []int
	for _, b := range t.batches {
		r := <-b
		if r.err != nil {
			return nil, r.err
		}
		for j, l := range r.local {
			if l {
				local = append(local, len(vecs)+j)
			}
		}
		vecs = append(vecs, r.vecs...)
	}
	if t.differs.Load() && len(local) > 0 {
		// One kbc computed was not the server's: the server computes
		// them all.
		texts := make([]chunkText, len(local))
		for j, i := range local {
			texts[j] = t.texts[i]
		}
		r := computeTSVectors(ctx, tx.Conn(), texts, nil, nil, nil)
		if r.err != nil {
			return nil, r.err
		}
		for j, i := range local {
			vecs[i] = r.vecs[j]
		}
		local = nil
	}
	t.parsed = len(local)
	return vecs, nil
}

// encoder returns an encoder for a session computing tsvectors, or nil
// where kbc does not compute them.
func (t *texts) encoder() *pgtsv.Encoder {
	if !t.local {
		return nil
	}
	return pgtsv.NewEncoder()
}

// pgtsvMajors are the server major versions whose parser and english
// dictionary package pgtsv follows, and is tested against: elsewhere the
// server computes every tsvector. PostgreSQL 18 stems otherwise (a newer
// Snowball: "added" is "add", not "ad"; 1,140 of 7,119 texts of the shared
// corpora differ), and a stemmer that differs on a few words only could
// pass the probe and the sample.
var pgtsvMajors = map[string]bool{"15": true}

// tsvectorProbe is the text on which kbc's tsvector is first checked
// against the server's.
var tsvectorProbe = pgtsv.Probe

// localTSVectors reports whether kbc's tsvectors are the server's, on
// tsvectorProbe.
func localTSVectors(ctx context.Context, conn *pgx.Conn) bool {
	want, ok := pgtsv.NewEncoder().English(tsvectorProbe + " ")
	if !ok {
		return false
	}
	var got []byte
	err := conn.QueryRow(ctx, `SELECT tsvectorsend(`+fmt.Sprintf(tsvectorSQL, "$1::text", "''")+`)`, tsvectorProbe).Scan(&got)
	return err == nil && bytes.Equal(got, want)
}

// computeTSVectors returns the tsvectors of rows, whose keys are keys,
// in tsvectorsend's binary form: nil for those kbq_text holds. Without
// keys, it computes them all. With enc, kbc computes those it can, and the
// server the others and one in sampleEvery of kbc's, to compare: where
// one differs, it sets differs, and kbc computes no more.
func computeTSVectors(ctx context.Context, conn *pgx.Conn, rows []chunkText, keys [][]byte, enc *pgtsv.Encoder, differs *atomic.Bool) tsvectorResult {
	fail := func(err error) tsvectorResult { return tsvectorResult{err: fmt.Errorf("compute tsvectors: %w", err)} }
	r := tsvectorResult{vecs: make([][]byte, len(rows)), local: make([]bool, len(rows))}
	missing := make([]bool, len(rows))
	for i := range missing {
		missing[i] = true
	}
	if keys != nil {
		held, err := heldTexts(ctx, conn, keys)
		if err != nil {
			return fail(err)
		}
		for i := range missing {
			missing[i] = !held[i]
		}
	}
	var server []int // the rows the server computes
	var samples int
	for i, row := range rows {
		if !missing[i] {
			continue
		}
		if enc != nil && !differs.Load() {
			if v, ok := enc.English(row.heading + " " + row.body); ok {
				r.vecs[i], r.local[i] = v, true
				if samples++; samples%sampleEvery != 1 {
					continue
				}
			}
		}
		server = append(server, i)
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
			i := server[j]
			if r.local[i] && !bytes.Equal(r.vecs[i], v) {
				differs.Store(true)
			}
			r.vecs[i], r.local[i] = v, false
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
