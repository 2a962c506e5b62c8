package pgstore

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/internal/postgres/pgsession"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
)

// versioned are notes kept, as versioned docs keep them, once per
// version: more distinct chunks than one batch of tsvectors, each twice.
func versioned() (testkb.Files, int) {
	files := testkb.Files{}
	const notes = tsvectorBatch + 50
	for i := range notes {
		text := fmt.Sprintf("# Cmdlet %d\n\nGet-Item%d reads item-%d from the provider's store, running quickly.\n", i, i, i)
		files[fmt.Sprintf(".kb/v1/n%03d.md", i)] = text
		files[fmt.Sprintf(".kb/v2/n%03d.md", i)] = text
	}
	return files, 2 * notes
}

// wrongTSVectors counts the chunks whose tsvector is not what the server
// computes from their heading and text.
func wrongTSVectors(t *testing.T, conn *pgx.Conn) int {
	t.Helper()
	return count(t, conn, `SELECT count(*) FROM kbq_chunk_search WHERE tsv IS DISTINCT FROM `+fmt.Sprintf(tsvectorSQL, "heading", "body"))
}

// Helper sessions compute every chunk's tsvector, each distinct text
// once, exactly as the server's to_tsvector does.
func TestTSVectorsAreTheServers(t *testing.T) {
	url := pgtest.DB(t)
	conn := pgtest.Connect(t, url)
	files, n := versioned()
	res, err := Publish(context.Background(), conn, source(t, "r", "a", files), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Chunks != n || count(t, conn, `SELECT count(*) FROM kbq_chunk`) != n {
		t.Fatalf("%d chunks written, want %d", res.Chunks, n)
	}
	if bad := wrongTSVectors(t, conn); bad != 0 {
		t.Errorf("%d of %d tsvectors differ from to_tsvector's", bad, n)
	}
	if m := count(t, conn, `SELECT count(*) FROM kbq_chunk_search WHERE tsv @@ to_tsquery('english', 'item-7 & running')`); m != 2 {
		t.Errorf("plain SQL finds 'item-7 & running' in %d chunks, want 2", m)
	}
}

// Where the server's english configuration is not PostgreSQL's own, the
// tsvectors follow it: the server computes every one.
func TestTSVectorsOfAnotherConfiguration(t *testing.T) {
	url := pgtest.DB(t)
	pgtest.Exec(t, url, `ALTER TEXT SEARCH CONFIGURATION english ALTER MAPPING FOR asciiword WITH simple`)
	conn := pgtest.Connect(t, url)
	files, n := versioned()
	if _, err := Publish(context.Background(), conn, source(t, "r", "a", files), Options{}); err != nil {
		t.Fatal(err)
	}
	if bad := wrongTSVectors(t, conn); bad != 0 {
		t.Errorf("%d of %d tsvectors differ from to_tsvector's", bad, n)
	}
	if m := count(t, conn, `SELECT count(*) FROM kbq_chunk_search WHERE tsv @@ to_tsquery('english', 'running')`); m != n {
		t.Errorf("plain SQL finds 'running' in %d chunks, want %d", m, n)
	}
}

// Each distinct text is kept once, with its tsvector, however many chunks
// of however many repositories hold it: a publish of texts the database
// holds computes and indexes nothing for them, and the texts no chunk
// names any longer are removed. To tell a text kept from one computed
// again, the test marks the stored tsvector of one.
func TestTextsAreKeptOnce(t *testing.T) {
	ctx := context.Background()
	files, n := versioned()
	url, conn := publishedDB(t, "a", files)
	if got := count(t, conn, `SELECT count(*) FROM kbq_text`); got != n/2 {
		t.Fatalf("%d texts kept for %d chunks holding %d distinct ones", got, n, n/2)
	}
	pgtest.Exec(t, url, `UPDATE kbq_text SET tsv = to_tsvector('english', 'marked') WHERE key = (SELECT text_key FROM kbq_chunk WHERE path = '.kb/v1/n007.md')`)
	more := testkb.Files{".kb/rollout.md": "# Rollout\n\nRoll out region by region.\n"}
	for k, v := range files {
		more[k] = v
	}
	if _, err := Publish(ctx, conn, source(t, "b", "a", more), Options{IsAncestor: history}); err != nil {
		t.Fatal(err)
	}
	b := `SELECT count(*) FROM kbq_chunk_search c JOIN kbq_repo r ON r.id = c.repo_id WHERE r.name = 'b' AND `
	if got := count(t, conn, b+`c.tsv @@ to_tsquery('english', 'marked')`); got != 2 {
		t.Errorf("%d chunks of b have the text's tsvector as kept, want 2 (its two copies)", got)
	}
	if got := count(t, conn, b+`c.tsv @@ plainto_tsquery('english', 'regions')`); got != 1 {
		t.Errorf("the new text's tsvector matches %d chunks of b, want 1", got)
	}
	if got := count(t, conn, `SELECT count(*) FROM kbq_text`); got != n/2+1 {
		t.Errorf("%d texts kept after b, want %d", got, n/2+1)
	}
	// b drops the rollout, which only it held; the rest a holds too.
	if _, err := Publish(ctx, conn, source(t, "b", "b", files), Options{IsAncestor: history}); err != nil {
		t.Fatal(err)
	}
	if got := count(t, conn, `SELECT count(*) FROM kbq_text`); got != n/2 {
		t.Errorf("%d texts kept after the rollout was removed, want %d", got, n/2)
	}
	if got := count(t, conn, `SELECT count(*) FROM kbq_chunk_search WHERE tsv @@ plainto_tsquery('english', 'regions')`); got != 0 {
		t.Errorf("the removed text still matches %d chunks", got)
	}
}

// A server that grants the publisher one session gets the same
// tsvectors, computed in that session.
func TestTSVectorsInOneSession(t *testing.T) {
	url := pgtest.DB(t)
	role := pgtest.Role(url, "one_session")
	pgtest.Exec(t, url,
		`CREATE ROLE `+role+` LOGIN CONNECTION LIMIT 1`,
		`GRANT CREATE ON SCHEMA public TO `+role)
	conn := pgtest.Connect(t, strings.Replace(url, "kbq@", role+"@", 1))
	if helpers := pgsession.Open(context.Background(), conn.Config(), tsvectorHelpers, nil); len(helpers) != 0 {
		t.Fatalf("%d helper sessions opened past the role's limit", len(helpers))
	}
	files, n := versioned()
	if _, err := Publish(context.Background(), conn, source(t, "r", "a", files), Options{}); err != nil {
		t.Fatal(err)
	}
	if bad := wrongTSVectors(t, conn); bad != 0 || count(t, conn, `SELECT count(*) FROM kbq_chunk`) != n {
		t.Errorf("%d of %d tsvectors differ from to_tsvector's", bad, n)
	}
}

// A database of schema version 1, whose tsvectors were generated on
// insert, is migrated in place and published into as before.
func TestMigrateFromVersion1(t *testing.T) {
	ctx := context.Background()
	url, conn := publishedDB(t, "r", files)
	pgtest.Exec(t, url, undoAccess...)
	pgtest.Exec(t, url,
		`DROP TRIGGER kbq_document_deleted ON kbq_document`,
		`DROP FUNCTION kbq_document_deleted`,
		`ALTER TABLE kbq_chunk ADD FOREIGN KEY (repo_id, path) REFERENCES kbq_document (repo_id, path) ON DELETE CASCADE`,
		`DROP VIEW kbq_chunk_search`,
		`ALTER TABLE kbq_chunk DROP COLUMN text_key`,
		`DROP TABLE kbq_text`,
		`ALTER TABLE kbq_chunk ADD COLUMN tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', heading || ' ' || body)) STORED`,
		`CREATE INDEX kbq_chunk_tsv ON kbq_chunk USING gin (tsv)`,
		`ALTER TABLE kbq_file ALTER COLUMN data SET STORAGE EXTENDED`,
		`UPDATE kbq_schema SET version = 1`)
	reader := pgtest.Role(url, "old_reader")
	pgtest.Exec(t, url, `CREATE ROLE `+reader+` LOGIN`, `GRANT SELECT ON kbq_chunk TO `+reader)
	more := testkb.Files{".kb/rollout.md": "# Rollout\n\nRoll out region by region.\n"}
	for k, v := range files {
		more[k] = v
	}
	if _, err := Publish(ctx, conn, source(t, "r", "b", more), Options{IsAncestor: history}); err != nil {
		t.Fatal(err)
	}
	if v, err := Version(ctx, conn); err != nil || v != SchemaVersion {
		t.Errorf("schema version %d after migrating (%v), want %d", v, err, SchemaVersion)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_chunk_search WHERE tsv @@ plainto_tsquery('english', 'regions')`); n != 1 {
		t.Errorf("plain SQL finds the new chunk %d times, want 1", n)
	}
	// A role that could read the chunks can read them with their
	// tsvectors.
	rc := pgtest.Connect(t, strings.Replace(url, "kbq@", reader+"@", 1))
	if n := count(t, rc, `SELECT count(*) FROM kbq_chunk_search WHERE tsv @@ plainto_tsquery('english', 'regions')`); n != 1 {
		t.Errorf("the reader finds the new chunk %d times, want 1", n)
	}
	// The keys the migration gave the chunks it kept are those kbc gives.
	rows, err := conn.Query(ctx, `SELECT heading, body, text_key FROM kbq_chunk`)
	if err != nil {
		t.Fatal(err)
	}
	var kept, wrong int
	for rows.Next() {
		var heading, body string
		var key []byte
		if err := rows.Scan(&heading, &body, &key); err != nil {
			t.Fatal(err)
		}
		kept++
		if string(key) != string(textKey(serverMajor(conn), heading, body)) {
			wrong++
		}
	}
	if rows.Err() != nil || kept != len(files)+1 || wrong != 0 {
		t.Errorf("%d of %d chunks have a key kbc would not give them (%v)", wrong, kept, rows.Err())
	}
	if bad := wrongTSVectors(t, conn); bad != 0 {
		t.Errorf("%d tsvectors differ from to_tsvector's after migrating", bad)
	}
	var storage string
	conn.QueryRow(ctx, `SELECT attstorage FROM pg_attribute WHERE attrelid = 'kbq_file'::regclass AND attname = 'data'`).Scan(&storage)
	if storage != "e" {
		t.Errorf("kbq_file.data is stored %q after migrating, want e (external, uncompressed)", storage)
	}
	// Version 5 dropped kbq_chunk's foreign keys; deleting a repository
	// still deletes its chunks.
	if n := count(t, conn, `SELECT count(*) FROM pg_constraint WHERE conrelid = 'kbq_chunk'::regclass AND contype = 'f'`); n != 0 {
		t.Errorf("kbq_chunk has %d foreign keys after migrating", n)
	}
	pgtest.Exec(t, url, `DELETE FROM kbq_repo`)
	if n := count(t, conn, `SELECT count(*) FROM kbq_chunk`); n != 0 {
		t.Errorf("%d chunks left after deleting their repository", n)
	}
}

// A text that a publish has locked, to name it, is not removed by another
// publish removing the last chunk that named it, nor does that publish
// wait: kbq_chunk.text_key has no foreign key to guard it.
func TestTextNamedMeanwhileIsKept(t *testing.T) {
	ctx := context.Background()
	url, conn := publishedDB(t, "b", files)
	texts := count(t, conn, `SELECT count(*) FROM kbq_text`)

	// Publisher a names the texts of b, and has not committed.
	tx, ts := namingPublisher(t, url, conn)
	if err := copyTexts(ctx, tx, ts); err != nil {
		t.Fatal(err)
	}

	// b is published again without those texts.
	other := testkb.Files{".kb/other.md": "# Other\n\nSomething else entirely.\n"}
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if _, err := Publish(wait, pgtest.Connect(t, url), source(t, "b", "b", other), Options{IsAncestor: history}); err != nil {
		t.Fatalf("publish while another holds the texts: %v", err)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_text`); n != texts+1 {
		t.Errorf("%d texts, want the %d a names and b's new one", n, texts)
	}
	// Once a has let them go, b's next removal takes them.
	tx.Rollback(ctx)
	if _, err := Publish(ctx, pgtest.Connect(t, url), source(t, "b", "c", testkb.Files{".kb/other.md": "# Other\n\nAnd now this.\n"}), Options{IsAncestor: history}); err != nil {
		t.Fatal(err)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_text`); n != texts+1 {
		t.Errorf("%d texts after a let go, want %d (b's own)", n, texts+1)
	}
}

// pendingGINEntries counts the entries of the GIN index not yet merged,
// or skips where pgstattuple is not to be had.
func pendingGINEntries(t *testing.T, url string, conn *pgx.Conn) int {
	t.Helper()
	if _, err := conn.Exec(context.Background(), `CREATE EXTENSION IF NOT EXISTS pgstattuple`); err != nil {
		t.Skipf("pgstattuple: %v", err)
	}
	return count(t, conn, `SELECT pending_tuples FROM pgstatginindex('kbq_text_tsv')`)
}

// A publish leaves the GIN index merged when its role owns it; a role
// that may write the rows but does not own the index publishes all the
// same, leaving the merge to autovacuum.
func TestPublishMergesTheGINIndex(t *testing.T) {
	ctx := context.Background()
	files, _ := versioned()
	url, conn := publishedDB(t, "r", files)
	if n := pendingGINEntries(t, url, conn); n != 0 {
		t.Errorf("%d GIN entries left pending by the owner's publish", n)
	}
	role := pgtest.Role(url, "writer")
	pgtest.Exec(t, url,
		`CREATE ROLE `+role+` LOGIN BYPASSRLS`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO `+role,
		`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO `+role)
	writer := pgtest.Connect(t, strings.Replace(url, "kbq@", role+"@", 1))
	others := testkb.Files{}
	for p, text := range files {
		others[p] = strings.ReplaceAll(text, "Cmdlet", "Function")
	}
	if _, err := Publish(ctx, writer, source(t, "s", "a", others), Options{}); err != nil {
		t.Fatalf("a writer that does not own the index: %v", err)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_chunk c JOIN kbq_repo r ON r.id = c.repo_id WHERE r.name = 's'`); n == 0 {
		t.Error("the writer's publish wrote no chunk")
	}
	if n := pendingGINEntries(t, url, conn); n == 0 {
		t.Error("the writer's entries were merged, which only the owner may do: the test proves nothing")
	}
}

// Removing the texts no chunk names any longer never fails a publish:
// where it cannot, as for a writer that may not delete them, or when
// another publish names one meanwhile, they are left.
func TestTextsLeftWhenTheyCannotBeRemoved(t *testing.T) {
	ctx := context.Background()
	url, conn := publishedDB(t, "r", files)
	role := pgtest.Role(url, "keeper")
	pgtest.Exec(t, url,
		`CREATE ROLE `+role+` LOGIN BYPASSRLS`,
		`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO `+role,
		`REVOKE DELETE ON kbq_text FROM `+role,
		`GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO `+role)
	writer := pgtest.Connect(t, strings.Replace(url, "kbq@", role+"@", 1))
	fewer := testkb.Files{}
	for p, text := range files {
		if p != ".kb/deploy.md" {
			fewer[p] = text
		}
	}
	before := count(t, conn, `SELECT count(*) FROM kbq_text`)
	res, err := Publish(ctx, writer, source(t, "r", "b", fewer), Options{IsAncestor: history})
	if err != nil || res.Removed != 1 {
		t.Fatalf("a publish that may not remove texts: %+v %v", res, err)
	}
	if after := count(t, conn, `SELECT count(*) FROM kbq_text`); after != before {
		t.Errorf("%d texts before, %d after: the writer removed some", before, after)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_chunk_search WHERE path = '.kb/deploy.md'`); n != 0 {
		t.Errorf("%d chunks of the removed document are left", n)
	}
}

// namingPublisher is a publish into url, begun and not committed, whose
// texts are those of the chunks conn sees: its rows added, its helpers
// started. It is rolled back when the test ends.
func namingPublisher(t *testing.T, url string, conn *pgx.Conn) (pgx.Tx, *texts) {
	t.Helper()
	ctx := context.Background()
	tx, err := pgtest.Connect(t, url).BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tx.Rollback(ctx) })
	ts := startTexts(ctx, tx, true)
	t.Cleanup(ts.stop)
	rows, err := conn.Query(ctx, `SELECT path, chunk, heading, line_start, line_end, body FROM kbq_chunk`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r chunkRow
		if err := rows.Scan(&r.path, &r.chunk, &r.heading, &r.lineStart, &r.lineEnd, &r.body); err != nil {
			t.Fatal(err)
		}
		ts.add(r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return tx, ts
}

// A text the helpers found in kbq_text, and another publish removed
// before this one locked it, is computed and written again.
func TestTextRemovedMeanwhileIsWrittenAgain(t *testing.T) {
	ctx := context.Background()
	url, conn := publishedDB(t, "a", files)
	tx, ts := namingPublisher(t, url, conn)
	publisher := tx.Conn()
	vecs, err := ts.tsvectors(ctx, tx)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if v != nil {
			t.Fatalf("text %d was computed, though kbq_text held it", i)
		}
	}
	pgtest.Exec(t, url, `DELETE FROM kbq_repo`, `DELETE FROM kbq_text`) // another publish's removal
	if err := copyMissing(ctx, tx, ts, vecs); err != nil {
		t.Fatal(err)
	}
	close(ts.stored)
	if n := count(t, publisher, `SELECT count(*) FROM kbq_text`); n != len(vecs) {
		t.Errorf("%d texts written again, want %d", n, len(vecs))
	}
	if n := count(t, publisher, `SELECT count(*) FROM kbq_text WHERE tsv @@ plainto_tsquery('english', 'rollback')`); n != 1 {
		t.Errorf("the texts written again have other tsvectors: 'rollback' matches %d", n)
	}
}
