package pgstore

import (
	"context"
	"crypto/sha256"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/kbqdev/kbq/internal/pgsession"
)

// tsvectorSQL is how a chunk's tsvector is computed, always by the server,
// so that plain SQL clients query it with the server's own parser and
// english dictionary (docs/postgres.md).
const tsvectorSQL = `to_tsvector('english', %[1]s || ' ' || %[2]s)`

// textKey is the key of the tsvector the server computes from heading and
// body: kbq_chunk.text_key, by which a publish finds the tsvector of a text
// the database holds already, in any repository, rather than have the
// server compute it again. The key names the server's major version,
// whose parser and dictionaries a tsvector comes from.
func textKey(server, heading, body string) []byte {
	h := sha256.New()
	h.Write([]byte("kbq tsvector\x00english\x00"))
	h.Write([]byte(server))
	h.Write([]byte{0})
	h.Write([]byte(heading))
	h.Write([]byte{0})
	h.Write([]byte(body))
	return h.Sum(nil)[:16]
}

// serverMajor is the major version of the server conn is connected to.
func serverMajor(conn *pgx.Conn) string {
	major, _, _ := strings.Cut(conn.PgConn().ParameterStatus("server_version"), ".")
	return major
}

// A chunkRow is one kbq_chunk row before its tsvector.
type chunkRow struct {
	path               string
	chunk              int
	heading            string
	lineStart, lineEnd int
	body               string
}

// tsvectorHelpers is how many extra sessions compute tsvectors while the
// publishing one writes. The parser and stemmer are most of a first
// publish's server time (docs/postgres.md, "Publishing"), and one
// session runs on one core.
const tsvectorHelpers = 3

// tsvectorBatch is how many chunks a helper computes at a time.
const tsvectorBatch = 400

// tsvectors are the tsvectors of a publish's chunk rows. Helper sessions
// compute them in batches, side by side, as the documents are read and
// while the publishing session writes them and the files; the helpers only
// read, so the publish stays one transaction. Where the server grants no
// helper, the publishing session computes them itself, just before their
// COPY. Chunks of the same heading and text, common where docs keep a copy
// per version, are computed once.
type tsvectors struct {
	server  string // the server's major version, for textKey
	seen    map[chunkText]int
	of      []int       // of each row added, its text's number
	texts   []chunkText // the distinct texts, in order
	keys    [][]byte    // and their keys (textKey)
	batches []chan tsvectorResult
	work    chan tsvectorWork // to the helpers; nil without any
	pending []tsvectorWork    // without helpers, for the publishing session
	stop    func()
	// copied is closed once the rows are copied.
	copied chan struct{}
}

// chunkText is what a chunk's tsvector is computed from.
type chunkText struct{ heading, body string }

type tsvectorWork struct {
	texts []chunkText
	keys  [][]byte
	out   chan tsvectorResult
}

type tsvectorResult struct {
	vecs [][]byte
	err  error
}

// startTSVectors opens the helper sessions, ready for rows; none when
// there are none to come.
func startTSVectors(ctx context.Context, tx pgx.Tx, rowsToCome bool) *tsvectors {
	ctx, cancel := context.WithCancel(ctx)
	t := &tsvectors{server: serverMajor(tx.Conn()), seen: map[chunkText]int{}}
	var helpers []*pgx.Conn
	if rowsToCome && !simple(tx) {
		helpers = pgsession.Open(ctx, tx.Conn().Config(), tsvectorHelpers, nil)
	}
	var wg sync.WaitGroup
	t.stop = func() {
		if t.work != nil {
			close(t.work)
			t.work = nil
		}
		cancel()
		wg.Wait()
		pgsession.Close(helpers)
	}
	work := make(chan tsvectorWork, 1024)
	if len(helpers) > 0 {
		t.work = work
	}
	t.copied = make(chan struct{})
	var merging atomic.Bool
	for _, h := range helpers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range work {
				vecs, err := computeTSVectors(ctx, h, w.texts, w.keys)
				w.out <- tsvectorResult{vecs, err}
			}
			// The first helper done merges the GIN entries the COPY
			// has made so far, while it goes on, so that less is left
			// for the merge after it.
			if !merging.CompareAndSwap(false, true) {
				return
			}
			for {
				select {
				case <-t.copied:
					return
				case <-ctx.Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := h.Exec(ctx, `SELECT gin_clean_pending_list('kbq_chunk_tsv')`); err != nil {
					return // not the index's owner: see mergeGINEntries
				}
			}
		}()
	}
	return t
}

// finish hands the last texts to the helpers; no more rows come.
func (t *tsvectors) finish() {
	t.send()
	if t.work != nil {
		close(t.work)
		t.work = nil
	}
}

// add takes the next row.
func (t *tsvectors) add(r chunkRow) {
	key := chunkText{r.heading, r.body}
	n, ok := t.seen[key]
	if !ok {
		n = len(t.texts)
		t.seen[key] = n
		t.texts = append(t.texts, key)
		t.keys = append(t.keys, textKey(t.server, r.heading, r.body))
		if len(t.texts)%tsvectorBatch == 0 {
			t.send()
		}
	}
	t.of = append(t.of, n)
}

// send hands the texts since the last batch to the helpers.
func (t *tsvectors) send() {
	start := len(t.batches) * tsvectorBatch
	if start == len(t.texts) {
		return
	}
	end := len(t.texts)
	w := tsvectorWork{texts: t.texts[start:end:end], keys: t.keys[start:end:end], out: make(chan tsvectorResult, 1)}
	t.batches = append(t.batches, w.out)
	if t.work != nil {
		t.work <- w
	} else {
		t.pending = append(t.pending, w)
	}
}

// writeChunks inserts rows, those added to t, into kbq_chunk with their
// tsvectors: by COPY, or, where the server takes no COPY, by INSERTs that
// compute them.
func writeChunks(ctx context.Context, tx pgx.Tx, repoID int64, rows []chunkRow, t *tsvectors) error {
	if len(rows) == 0 {
		return nil
	}
	if simple(tx) {
		return insertChunks(ctx, tx, repoID, rows, t)
	}
	t.finish()
	for _, w := range t.pending {
		vecs, err := computeTSVectors(ctx, tx.Conn(), w.texts, w.keys)
		w.out <- tsvectorResult{vecs, err}
	}
	// New index entries go to the GIN index's pending list and are
	// merged in one bulk pass at the end, rather than every 4 MB
	// (docs/postgres.md, "Publishing").
	if _, err := tx.Exec(ctx, `SET LOCAL gin_pending_list_limit = '256MB'`); err != nil {
		return err
	}
	// COPY sends the tsvectors in the binary form tsvectorsend returned.
	types := tx.Conn().TypeMap()
	types.RegisterType(&pgtype.Type{Name: "tsvector", OID: pgtype.TSVectorOID, Codec: pgtype.ByteaCodec{}})
	defer types.RegisterType(&pgtype.Type{Name: "tsvector", OID: pgtype.TSVectorOID, Codec: pgtype.TSVectorCodec{}})
	src := &chunkSource{repoID: repoID, rows: rows, t: t}
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"kbq_chunk"},
		[]string{"repo_id", "path", "chunk", "heading", "line_start", "line_end", "body", "tsv", "text_key"}, src)
	close(t.copied)
	if err != nil {
		return err
	}
	return mergeGINEntries(ctx, tx)
}

// mergeGINEntries merges the GIN index's pending entries, the publish's
// own, into the index in one bulk pass before the publish commits, so
// that plain SQL searches never scan a long pending list and no later
// publish pays for this one's. Only the index's owner may; for another
// role, autovacuum merges them.
func mergeGINEntries(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, `SAVEPOINT kbq_merge`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `SELECT gin_clean_pending_list('kbq_chunk_tsv')`); err != nil {
		_, err = tx.Exec(ctx, `ROLLBACK TO SAVEPOINT kbq_merge`)
		return err
	}
	_, err := tx.Exec(ctx, `RELEASE SAVEPOINT kbq_merge`)
	return err
}

// reuseSQL is the tsvector of a text (heading %[1]s, body %[2]s, key
// %[3]s) as a chunk row of the database holds it already, else computed.
const reuseSQL = `coalesce((SELECT k.tsv FROM kbq_chunk k WHERE k.text_key = %[3]s LIMIT 1), ` + tsvectorSQL + `)`

// computeTSVectors asks the server for the tsvectors of rows, whose keys
// are keys, in tsvectorsend's binary form: those the database holds
// already, in any repository, are read rather than computed.
func computeTSVectors(ctx context.Context, conn *pgx.Conn, rows []chunkText, keys [][]byte) ([][]byte, error) {
	headings := make([]string, len(rows))
	bodies := make([]string, len(rows))
	for i, r := range rows {
		headings[i], bodies[i] = r.heading, r.body
	}
	q, err := conn.Query(ctx, fmt.Sprintf(`SELECT tsvectorsend(`+reuseSQL+`)
		FROM unnest($1::text[], $2::text[], $3::bytea[]) WITH ORDINALITY AS c (heading, body, key, n) ORDER BY n`, "c.heading", "c.body", "c.key"),
		headings, bodies, keys)
	if err != nil {
		return nil, fmt.Errorf("compute tsvectors: %w", err)
	}
	vecs := make([][]byte, 0, len(rows))
	for q.Next() {
		var v []byte
		if err := q.Scan(&v); err != nil {
			q.Close()
			return nil, fmt.Errorf("compute tsvectors: %w", err)
		}
		vecs = append(vecs, v)
	}
	if err := q.Err(); err != nil {
		return nil, fmt.Errorf("compute tsvectors: %w", err)
	}
	if len(vecs) != len(rows) {
		return nil, fmt.Errorf("compute tsvectors: %d for %d chunks", len(vecs), len(rows))
	}
	return vecs, nil
}

// chunkSource streams rows into COPY, each once its tsvector is in.
type chunkSource struct {
	repoID int64
	rows   []chunkRow
	t      *tsvectors
	vecs   [][]byte // the tsvectors of t.texts, as far as they are in
	i      int
	err    error
}

func (s *chunkSource) Next() bool {
	if s.err != nil || s.i >= len(s.rows) {
		return false
	}
	for s.t.of[s.i] >= len(s.vecs) {
		r := <-s.t.batches[len(s.vecs)/tsvectorBatch]
		if r.err != nil {
			s.err = r.err
			return false
		}
		s.vecs = append(s.vecs, r.vecs...)
	}
	s.i++
	return true
}

func (s *chunkSource) Values() ([]any, error) {
	r := s.rows[s.i-1]
	text := s.t.of[s.i-1]
	return []any{s.repoID, r.path, r.chunk, r.heading, r.lineStart, r.lineEnd, r.body, s.vecs[text], s.t.keys[text]}, nil
}

func (s *chunkSource) Err() error { return s.err }

// insertChunks writes rows, those added to t, by INSERTs of up to 100,
// the server finding or computing their tsvectors: for servers that take
// one session and no COPY.
func insertChunks(ctx context.Context, tx pgx.Tx, repoID int64, rows []chunkRow, t *tsvectors) error {
	for start := 0; start < len(rows); start += 100 {
		part := rows[start:min(start+100, len(rows))]
		sql := []byte(`INSERT INTO kbq_chunk (repo_id, path, chunk, heading, line_start, line_end, body, text_key, tsv) VALUES `)
		args := []any{repoID}
		for i, r := range part {
			if i > 0 {
				sql = append(sql, ", "...)
			}
			n := len(args)
			args = append(args, r.path, r.chunk, r.heading, r.lineStart, r.lineEnd, r.body, t.keys[t.of[start+i]])
			tsv := fmt.Sprintf(reuseSQL, fmt.Sprintf("$%d", n+3), fmt.Sprintf("$%d", n+6), fmt.Sprintf("$%d::bytea", n+7))
			sql = fmt.Appendf(sql, "($1, $%d, $%d, $%d, $%d, $%d, $%d, $%d::bytea, %s)", n+1, n+2, n+3, n+4, n+5, n+6, n+7, tsv)
		}
		if _, err := tx.Exec(ctx, string(sql), args...); err != nil {
			return err
		}
	}
	return nil
}
