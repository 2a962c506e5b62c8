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

	"github.com/kbqdev/kbq/internal/postgres/pgsession"
)

// textKey is the key of the text a chunk's tsvector is computed from, its
// heading and body: kbq_text holds each text's tsvector once, under its
// key, however many chunks of however many repositories hold the text,
// and a publish computes the tsvectors only of texts the database does
// not hold. The key names the server's major version, whose parser and
// dictionaries a tsvector comes from.
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

// texts are the distinct texts of a publish's chunk rows, and the
// tsvectors of those the database lacks. Helper sessions look them up in
// kbq_text and have the server compute the tsvectors of the missing ones,
// in batches, side
// by side, as the documents are read and while the publishing session
// writes them and the files; the helpers only read, so the publish stays
// one transaction. Where the server grants no helper, the publishing
// session computes them itself.
type texts struct {
	server  string // the server's major version, for textKey
	seen    map[chunkText]int
	of      []int       // of each row added, its text's number
	texts   []chunkText // the distinct texts, in order
	keys    [][]byte    // and their keys (textKey)
	batches []chan tsvectorResult
	work    chan tsvectorWork // to the helpers; nil without any
	pending []tsvectorWork    // without helpers, for the publishing session
	stop    func()
	// stored is closed once the new texts are written; written counts
	// them.
	stored  chan struct{}
	written int
}

// chunkText is what a chunk's tsvector is computed from.
type chunkText struct{ heading, body string }

// startTexts opens the helper sessions, ready for rows; none when there
// are none to come.
func startTexts(ctx context.Context, tx pgx.Tx, rowsToCome bool) *texts {
	ctx, cancel := context.WithCancel(ctx)
	t := &texts{server: serverMajor(tx.Conn()), seen: map[chunkText]int{}}
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
	t.stored = make(chan struct{})
	var merging atomic.Bool
	for _, h := range helpers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for w := range work {
				w.out <- computeTSVectors(ctx, h, w.texts, w.keys)
			}
			// The first helper done merges the GIN entries the new
			// texts have made so far, while they go on, so that less
			// is left for the merge after them.
			if !merging.CompareAndSwap(false, true) {
				return
			}
			for {
				select {
				case <-t.stored:
					return
				case <-ctx.Done():
					return
				case <-time.After(20 * time.Millisecond):
				}
				if _, err := h.Exec(ctx, `SELECT gin_clean_pending_list('kbq_text_tsv')`); err != nil {
					return // not the index's owner: see mergeGINEntries
				}
			}
		}()
	}
	return t
}

// finish hands the last texts to the helpers; no more rows come.
func (t *texts) finish() {
	t.send()
	if t.work != nil {
		close(t.work)
		t.work = nil
	}
}

// add takes the next row.
func (t *texts) add(r chunkRow) {
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
func (t *texts) send() {
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

// holdTexts locks the rows of kbq_text that hold the texts of t against
// removal until the publish ends, and has write write the others (by
// their numbers in t), until every one is held: the chunk rows that name
// them are written after. Another publish removes the texts no chunk
// names any longer (removeTexts); this one may name them again, and
// writes any it removed meanwhile.
func holdTexts(ctx context.Context, tx pgx.Tx, t *texts, write func(missing []int) error) error {
	check := make([]int, len(t.keys))
	for i := range check {
		check[i] = i
	}
	for range 3 {
		held := map[string]bool{}
		for start := 0; start < len(check); start += 10000 {
			part := check[start:min(start+10000, len(check))]
			keys := make([][]byte, len(part))
			for j, i := range part {
				keys[j] = t.keys[i]
			}
			rows, err := tx.Query(ctx, `SELECT key FROM kbq_text WHERE key = ANY($1) FOR KEY SHARE`, keys)
			if err != nil {
				return err
			}
			for rows.Next() {
				var k []byte
				if err := rows.Scan(&k); err != nil {
					rows.Close()
					return err
				}
				held[string(k)] = true
			}
			if err := rows.Err(); err != nil {
				return err
			}
		}
		var missing []int
		for _, i := range check {
			if !held[string(t.keys[i])] {
				missing = append(missing, i)
			}
		}
		if len(missing) == 0 {
			return nil
		}
		if err := write(missing); err != nil {
			return err
		}
		check = missing
	}
	return fmt.Errorf("texts removed by other publishes as fast as this one wrote them")
}

// copyTexts waits for the helpers' tsvectors, locks the texts kbq_text
// holds, and writes the others with theirs.
func copyTexts(ctx context.Context, tx pgx.Tx, t *texts) error {
	defer close(t.stored)
	vecs, err := t.tsvectors(ctx, tx)
	if err != nil {
		return err
	}
	return copyMissing(ctx, tx, t, vecs)
}

// copyMissing locks the texts kbq_text holds and writes the others, with
// their tsvectors vecs, computing those of the texts that another publish
// removed since the helpers found them.
func copyMissing(ctx context.Context, tx pgx.Tx, t *texts, vecs [][]byte) error {
	return holdTexts(ctx, tx, t, func(missing []int) error {
		var gone []int
		for _, i := range missing {
			if vecs[i] == nil {
				gone = append(gone, i)
			}
		}
		if len(gone) > 0 {
			texts, keys := make([]chunkText, len(gone)), make([][]byte, len(gone))
			for j, i := range gone {
				texts[j], keys[j] = t.texts[i], t.keys[i]
			}
			r := computeTSVectors(ctx, tx.Conn(), texts, nil)
			if r.err != nil {
				return r.err
			}
			for j, i := range gone {
				vecs[i] = r.vecs[j]
			}
		}
		return storeTexts(ctx, tx, t, missing, vecs)
	})
}

// storeTexts writes the texts of t numbered missing, with their tsvectors
// vecs, into kbq_text, through a temporary table: another publish may
// write the same texts meanwhile, and COPY cannot skip them.
func storeTexts(ctx context.Context, tx pgx.Tx, t *texts, missing []int, vecs [][]byte) error {
	if _, err := tx.Exec(ctx, `CREATE TEMPORARY TABLE IF NOT EXISTS kbq_new_text (key bytea, tsv tsvector) ON COMMIT DROP`); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `TRUNCATE kbq_new_text`); err != nil {
		return err
	}
	// COPY sends the tsvectors in the binary form tsvectorsend returned.
	types := tx.Conn().TypeMap()
	types.RegisterType(&pgtype.Type{Name: "tsvector", OID: pgtype.TSVectorOID, Codec: pgtype.ByteaCodec{}})
	defer types.RegisterType(&pgtype.Type{Name: "tsvector", OID: pgtype.TSVectorOID, Codec: pgtype.TSVectorCodec{}})
	_, err := tx.CopyFrom(ctx, pgx.Identifier{"kbq_new_text"}, []string{"key", "tsv"},
		pgx.CopyFromSlice(len(missing), func(j int) ([]any, error) {
			return []any{t.keys[missing[j]], vecs[missing[j]]}, nil
		}))
	if err != nil {
		return err
	}
	// New index entries go to the GIN index's pending list and are
	// merged in one bulk pass at the end, rather than every 4 MB
	// (docs/postgres.md, "Publishing").
	if _, err := tx.Exec(ctx, `SET LOCAL gin_pending_list_limit = '256MB'`); err != nil {
		return err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO kbq_text (key, tsv) SELECT key, tsv FROM kbq_new_text ON CONFLICT (key) DO NOTHING`)
	if err != nil {
		return err
	}
	t.written += int(tag.RowsAffected())
	return mergeGINEntries(ctx, tx)
}

// insertTexts writes the texts kbq_text lacks, the server computing their
// tsvectors, by INSERTs of up to 100, and locks the others: for servers
// that take one session and no COPY.
func insertTexts(ctx context.Context, tx pgx.Tx, t *texts) error {
	return holdTexts(ctx, tx, t, func(missing []int) error {
		for start := 0; start < len(missing); start += 100 {
			part := missing[start:min(start+100, len(missing))]
			sql := []byte(`INSERT INTO kbq_text (key, tsv) VALUES `)
			var args []any
			for j, i := range part {
				if j > 0 {
					sql = append(sql, ", "...)
				}
				n := len(args)
				args = append(args, t.keys[i], t.texts[i].heading, t.texts[i].body)
				sql = fmt.Appendf(sql, "($%d::bytea, %s)", n+1, fmt.Sprintf(tsvectorSQL, fmt.Sprintf("$%d::text", n+2), fmt.Sprintf("$%d::text", n+3)))
			}
			sql = append(sql, " ON CONFLICT (key) DO NOTHING"...)
			tag, err := tx.Exec(ctx, string(sql), args...)
			if err != nil {
				return err
			}
			t.written += int(tag.RowsAffected())
		}
		return nil
	})
}

// removeTexts deletes the texts of keys, those of the chunks a publish
// removed, that no chunk names any longer. It never fails a publish:
// where it cannot, the texts are left for a later publish to remove.
//
// kbq_chunk.text_key has no foreign key; this is what keeps it naming a
// text. Another publish locks the texts it names (holdTexts) until it
// commits: removeTexts locks the others, skipping those, and then, in a
// statement that sees every publish committed meanwhile, deletes those no
// chunk names. A publish that comes to name one of them after that waits
// for this one, finds it gone, and writes it again.
func removeTexts(ctx context.Context, tx pgx.Tx, keys [][]byte) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `SAVEPOINT kbq_remove_texts`); err != nil {
		return err
	}
	err := func() error {
		q, err := tx.Query(ctx, `SELECT key FROM kbq_text WHERE key = ANY($1) FOR UPDATE SKIP LOCKED`, keys)
		if err != nil {
			return err
		}
		locked, err := pgx.CollectRows(q, pgx.RowTo[[]byte])
		if err != nil || len(locked) == 0 {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM kbq_text t WHERE t.key = ANY($1)
			AND NOT EXISTS (SELECT 1 FROM kbq_chunk c WHERE c.text_key = t.key)`, locked)
		return err
	}()
	if err != nil {
		_, err = tx.Exec(ctx, `ROLLBACK TO SAVEPOINT kbq_remove_texts`)
		return err
	}
	_, err = tx.Exec(ctx, `RELEASE SAVEPOINT kbq_remove_texts`)
	return err
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
	if _, err := tx.Exec(ctx, `SELECT gin_clean_pending_list('kbq_text_tsv')`); err != nil {
		_, err = tx.Exec(ctx, `ROLLBACK TO SAVEPOINT kbq_merge`)
		return err
	}
	_, err := tx.Exec(ctx, `RELEASE SAVEPOINT kbq_merge`)
	return err
}
