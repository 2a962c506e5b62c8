package pgstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/reponame"
	"github.com/kbqdev/kbq/query"
)

// A Source is what a publish writes: the artifact of one commit of a
// repository.
type Source struct {
	Repo   string // github.com/org/repo
	Commit string
	// Header is the artifact's manifest; Documents its documents.
	Header    *artifact.Manifest
	Documents []artifact.Document
	// Chunks returns a document's chunks as the artifact stores them.
	Chunks func(context.Context, artifact.Document) ([]query.Chunk, error)
	// Dir is the artifact's directory and Files its files (ArtifactFiles),
	// stored so that kbq reads the database with its own engine.
	Dir   string
	Files []File
	// Vectors, when the artifact has them, returns a document's chunk
	// vectors, stored in kbq_chunk_vector where pgvector is.
	Vectors func(artifact.Document) ([][]float32, error)
}

// Options shape a publish.
type Options struct {
	// Force publishes over a newer or unrelated commit.
	Force bool
	// IsAncestor reports whether commit a is an ancestor of commit b (or
	// b itself), from the repository's history; it fails when the
	// history does not hold both.
	IsAncestor func(a, b string) (bool, error)
	// Unrelated reports whether commit a belongs to another history than
	// commit b: the repository has no commit a (and is not a shallow
	// clone, which could lack it), or the two have no common ancestor.
	// The name published then belongs to another repository.
	Unrelated func(a, b string) bool
	// ReplaceUnrelated lets Force replace an unrelated history.
	ReplaceUnrelated bool
	// Now is the publish time.
	Now time.Time
	// Visibility, when set, is the repository's: public, internal or
	// private. A repository's first publish makes it private otherwise.
	Visibility string
	// OrgScope "on" marks the repository as an org scope, in force in
	// every repository read with it (the last of them); "off" unmarks it;
	// "" leaves it as it is.
	OrgScope string
}

// Result says what a publish did.
type Result struct {
	// Previous is the commit it replaced, "" for a repository's first.
	Previous string
	// Documents that were new, changed (rewritten with their chunks),
	// re-dated (only their age changed) and removed; chunk rows written,
	// and of their texts, those the database did not hold.
	Added, Changed, Redated, Removed, Chunks, Texts int
	// Bytes of artifact files sent: those the database did not hold.
	Bytes int64
	// Vectors of chunks written; VectorsNote says why none were, when
	// the artifact has them and the database cannot take them.
	Vectors     int
	VectorsNote string
}

// Unchanged reports whether the publish wrote no document.
func (r *Result) Unchanged() bool { return r.Added+r.Changed+r.Redated+r.Removed == 0 && r.Bytes == 0 }

var (
	// ErrOlder means the commit is older than the one published.
	ErrOlder = errors.New("older than the commit published")
	// ErrDiverged means neither commit descends from the other.
	ErrDiverged = errors.New("not a descendant of the commit published")
	// ErrTaken means the name published holds another repository's
	// history.
	ErrTaken = errors.New("name taken")
)

// CheckRepoName reports why name cannot name a published repository
// (package reponame).
func CheckRepoName(name string) error { return reponame.Check(name) }

// Publish writes src into the database in one transaction: readers see
// the repository's previous knowledge or the new, never a mix, and a
// publish that dies leaves the previous. Documents whose compiled form is
// unchanged are not rewritten. Publishes of one repository take turns
// (an advisory lock on its name); of different repositories, they run
// side by side.
func Publish(ctx context.Context, conn *pgx.Conn, src *Source, opts Options) (*Result, error) {
	if err := CheckRepoName(src.Repo); err != nil {
		return nil, err
	}
	if err := Migrate(ctx, conn); err != nil {
		return nil, err
	}
	res := &Result{}
	withVectors := false
	if e := src.Header.Embeddings; e != nil && src.Vectors != nil {
		note, err := ensureVectors(ctx, conn, e.Dims)
		if err != nil {
			return nil, err
		}
		withVectors, res.VectorsNote = note == "", note
	}
	// Each statement sees what other publishes committed before it:
	// holdTexts and removeTexts count on it.
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, repoLock(src.Repo)); err != nil {
		return nil, err
	}
	if err := fastCompression(ctx, tx); err != nil {
		return nil, err
	}
	var repoID int64
	var oldHeader string
	err = tx.QueryRow(ctx, `SELECT id, commit, header FROM kbq_repo WHERE name = $1`, src.Repo).Scan(&repoID, &res.Previous, &oldHeader)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		res.Previous = ""
	case err != nil:
		return nil, err
	default:
		if err := checkOrder(src.Repo, res.Previous, src.Commit, opts); err != nil {
			return nil, err
		}
	}
	header, err := json.Marshal(src.Header)
	if err != nil {
		return nil, err
	}
	now := opts.Now
	if now.IsZero() {
		now = time.Now()
	}
	// The same commit with the same header is the same publish: the row
	// is left as it is.
	if res.Previous != src.Commit || !sameJSON(oldHeader, header) {
		err = tx.QueryRow(ctx, `INSERT INTO kbq_repo (name, commit, published_at, header) VALUES ($1, $2, $3, $4)
			ON CONFLICT (name) DO UPDATE SET commit = EXCLUDED.commit, published_at = EXCLUDED.published_at, header = EXCLUDED.header
			RETURNING id`, src.Repo, src.Commit, now, string(header)).Scan(&repoID)
		if err != nil {
			return nil, err
		}
	}
	if err := setAccess(ctx, tx, repoID, opts.Visibility, opts.OrgScope); err != nil {
		return nil, err
	}
	ch, err := planDocuments(ctx, tx, repoID, src, res)
	if err != nil {
		return nil, err
	}
	// Other sessions look up the chunks' texts as the documents are
	// read, and while this one writes them and the files; kbc, or the
	// server, computes the tsvectors of new ones.
	texts := startTexts(ctx, tx, len(ch.write) > 0)
	defer texts.stop()
	removed, err := ch.writeDocuments(ctx, tx, repoID, src, withVectors, texts)
	if err != nil {
		return nil, err
	}
	res.Chunks, res.Vectors = len(ch.chunkRows), len(ch.vectorRows)
	if len(src.Files) > 0 {
		if res.Bytes, err = writeFiles(ctx, tx, repoID, src.Dir, src.Files); err != nil {
			return nil, err
		}
	}
	if err := writeChunks(ctx, tx, repoID, ch.chunkRows, texts); err != nil {
		return nil, fmt.Errorf("write chunks: %w", err)
	}
	res.Texts = texts.written
	if err := removeTexts(ctx, tx, removed); err != nil {
		return nil, err
	}
	if err := insertRows(ctx, tx, "kbq_chunk_vector", []string{"repo_id", "path", "chunk", "embedding"}, []string{"", "", "", "vector"}, ch.vectorRows); err != nil {
		return nil, fmt.Errorf("write chunk vectors: %w", err)
	}
	return res, tx.Commit(ctx)
}

// sameJSON reports whether a stored JSON value (as the server gives it
// back, reformatted) holds what b does.
func sameJSON(stored string, b []byte) bool {
	var x, y any
	return json.Unmarshal([]byte(stored), &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// fastCompression has the server compress the values the publish writes
// with lz4 where it can: pglz was an eighth of a publish's server time, lz4
// takes a quarter of pglz's for a tenth more space.
func fastCompression(ctx context.Context, tx pgx.Tx) error {
	var lz4 bool
	err := tx.QueryRow(ctx, `SELECT coalesce(bool_or('lz4' = ANY (enumvals)), false) FROM pg_settings WHERE name = 'default_toast_compression'`).Scan(&lz4)
	if err != nil || !lz4 {
		return err
	}
	_, err = tx.Exec(ctx, `SET LOCAL default_toast_compression = 'lz4'`)
	return err
}

// checkOrder refuses to publish commit over prev unless it descends from
// it, or opts.Force.
func checkOrder(name, prev, commit string, opts Options) error {
	if prev == commit || prev == "" {
		return nil
	}
	if opts.Unrelated != nil && !opts.ReplaceUnrelated && opts.Unrelated(prev, commit) {
		return fmt.Errorf("%w: the name %s is taken: it holds %.12s, a commit of another history than this repository's; publish this one under a name of its own (--repo NAME, such as github.com/org/repo)", ErrTaken, name, prev)
	}
	if opts.Force {
		return nil
	}
	if opts.IsAncestor == nil {
		return fmt.Errorf("%w: cannot tell whether %.12s descends from %.12s (publish with --force)", ErrDiverged, commit, prev)
	}
	newer, err := opts.IsAncestor(prev, commit)
	if err != nil {
		return fmt.Errorf("cannot tell whether %.12s descends from %.12s, which is published: %v (fetch the history, for instance with fetch-depth: 0 in actions/checkout, or publish with --force)", commit, prev, err)
	}
	if newer {
		return nil
	}
	if older, err := opts.IsAncestor(commit, prev); err == nil && older {
		return fmt.Errorf("%w: %.12s is an ancestor of %.12s, which is published (publish with --force to go back)", ErrOlder, commit, prev)
	}
	return fmt.Errorf("%w: %.12s does not descend from %.12s, which is published (publish with --force to replace it)", ErrDiverged, commit, prev)
}

// repoLock is the advisory lock key of a repository's publishes.
func repoLock(name string) int64 {
	h := fnv.New64a()
	h.Write([]byte("kbq publish " + name))
	return int64(h.Sum64())
}

// stored is a document row as published.
type stored struct {
	digest, ageDigest string
}

// changes are what brings the repository's document and chunk rows to a
// source's: new and changed documents are written whole, with their
// chunks; those whose age alone changed are updated in place; the rest
// are left.
type changes struct {
	// remove are the paths of the documents to delete, rewritten ones
	// among them; redate updates those whose age alone changed; write
	// are the documents to write.
	remove []string
	redate *pgx.Batch
	write  []planned
	// The rows of the documents' chunks and vectors, as writeDocuments
	// reads them.
	chunkRows  []chunkRow
	vectorRows [][]any
}

// planned is a document to write, in the form it is published.
type planned struct {
	artifact.Document
	digest, ageDigest string
	document          []byte
}

// planDocuments compares src's documents with those published.
func planDocuments(ctx context.Context, tx pgx.Tx, repoID int64, src *Source, res *Result) (*changes, error) {
	rows, err := tx.Query(ctx, `SELECT path, digest, age_digest FROM kbq_document WHERE repo_id = $1`, repoID)
	if err != nil {
		return nil, err
	}
	old := map[string]stored{}
	for rows.Next() {
		var path string
		var s stored
		if err := rows.Scan(&path, &s.digest, &s.ageDigest); err != nil {
			return nil, err
		}
		old[path] = s
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	ch := &changes{redate: &pgx.Batch{}}
	var rewrite, remove []string
	seen := map[string]bool{}
	for _, d := range src.Documents {
		seen[d.Path] = true
		digest, ageDigest, document, err := documentJSON(d)
		if err != nil {
			return nil, err
		}
		prev, had := old[d.Path]
		switch {
		case had && prev.digest == digest && prev.ageDigest == ageDigest:
			continue
		case had && prev.digest == digest:
			ch.redate.Queue(`UPDATE kbq_document SET document = $3, age_digest = $4 WHERE repo_id = $1 AND path = $2`, repoID, d.Path, string(document), ageDigest)
			res.Redated++
			continue
		case had:
			rewrite = append(rewrite, d.Path)
			res.Changed++
		default:
			res.Added++
		}
		ch.write = append(ch.write, planned{d, digest, ageDigest, document})
	}
	for path := range old {
		if !seen[path] {
			remove = append(remove, path)
			res.Removed++
		}
	}
	ch.remove = append(rewrite, remove...)
	return ch, nil
}

// writeDocuments deletes, updates and inserts the document rows, and
// deletes the chunk rows of those it deletes, returning the keys of their
// texts. It reads each document's chunks as its row goes out, into
// ch.chunkRows and texts, and its vectors when withVectors.
func (ch *changes) writeDocuments(ctx context.Context, tx pgx.Tx, repoID int64, src *Source, withVectors bool, texts *texts) (removed [][]byte, err error) {
	if len(ch.remove) > 0 {
		rows, err := tx.Query(ctx, `DELETE FROM kbq_chunk WHERE repo_id = $1 AND path = ANY($2) RETURNING text_key`, repoID, ch.remove)
		if err != nil {
			return nil, err
		}
		seen := map[string]bool{}
		for rows.Next() {
			var k []byte
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return nil, err
			}
			if !seen[string(k)] {
				seen[string(k)] = true
				removed = append(removed, k)
			}
		}
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM kbq_document WHERE repo_id = $1 AND path = ANY($2)`, repoID, ch.remove); err != nil {
			return nil, err
		}
	}
	if ch.redate.Len() > 0 {
		if err := tx.SendBatch(ctx, ch.redate).Close(); err != nil {
			return nil, err
		}
	}
	rows := &documentRows{ctx: ctx, ch: ch, repoID: repoID, src: src, withVectors: withVectors, texts: texts}
	cols := []string{"repo_id", "path", "blob", "digest", "age_digest", "kind", "scope", "topic", "title", "tags", "document", "frontmatter", "body"}
	if simple(tx) {
		var all [][]any
		for rows.Next() {
			row, _ := rows.Values()
			all = append(all, row)
		}
		if err = rows.Err(); err == nil {
			err = insertRows(ctx, tx, "kbq_document", cols, nil, all)
		}
	} else {
		_, err = tx.CopyFrom(ctx, pgx.Identifier{"kbq_document"}, cols, rows)
	}
	if err != nil {
		return nil, fmt.Errorf("write documents: %w", err)
	}
	return removed, nil
}

// documentRows are the rows of the documents to write, each read from
// the artifact with its chunks as COPY asks for it, so that reading the
// artifact overlaps the server's writing.
type documentRows struct {
	ctx         context.Context
	ch          *changes
	repoID      int64
	src         *Source
	withVectors bool
	texts       *texts
	i           int
	row         []any
	err         error
}

func (r *documentRows) Next() bool {
	if r.err != nil || r.i >= len(r.ch.write) {
		return false
	}
	d := r.ch.write[r.i]
	r.i++
	chunks, err := r.src.Chunks(r.ctx, d.Document)
	if err != nil {
		r.err = err
		return false
	}
	front, body := query.JoinChunks(chunks)
	tags := d.Tags
	if tags == nil {
		tags = []string{}
	}
	r.row = []any{r.repoID, d.Path, d.Blob, d.digest, d.ageDigest, d.Kind, d.Scope, d.Topic, d.Title, tags, string(d.document), front, body}
	for _, c := range chunks {
		row := chunkRow{d.Path, c.Ordinal, c.Heading, c.Lines[0], c.Lines[1], c.Body}
		r.ch.chunkRows = append(r.ch.chunkRows, row)
		r.texts.add(row)
	}
	if r.withVectors {
		vecs, err := r.src.Vectors(d.Document)
		if err != nil {
			r.err = err
			return false
		}
		for i, v := range vecs {
			r.ch.vectorRows = append(r.ch.vectorRows, []any{r.repoID, d.Path, i, vectorText(v)})
		}
	}
	return true
}

func (r *documentRows) Values() ([]any, error) { return r.row, nil }

func (r *documentRows) Err() error { return r.err }

// documentJSON is a document as published: its JSON without where the
// artifact placed its chunks; the digest of what a build compiles from its
// file (all but its age), which says whether to rewrite it with its
// chunks; and the digest of its age, which says whether to update it.
func documentJSON(d artifact.Document) (digest, ageDigest string, document []byte, err error) {
	d.Seg, d.Doc = 0, 0
	if document, err = json.Marshal(d); err != nil {
		return "", "", nil, err
	}
	age := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%s\x00%s\x00%t", d.Commit, d.Author, d.Updated, d.Uncommitted)))
	d.Commit, d.Author, d.Updated, d.Uncommitted = "", "", "", false
	compiled, err := json.Marshal(d)
	if err != nil {
		return "", "", nil, err
	}
	sum := sha256.Sum256(compiled)
	return hex.EncodeToString(sum[:]), hex.EncodeToString(age[:]), document, nil
}
