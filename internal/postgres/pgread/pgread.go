// Package pgread reads the knowledge kbc publish keeps in PostgreSQL, for
// kbq --db: each repository's artifact files, stored by content, are
// fetched once into a local cache and opened as artifacts, so that a
// search of the database ranks exactly as a search of the repositories'
// own artifacts (query.Union across them). A reader that starts cold
// fetches the tables every search reads first, and what its searches read
// of the rest as they read it (FetchPartly), before the rest. kbq connects
// with a role that only reads; every value reaches SQL as a parameter.
package pgread

import (
	"github.com/kbqdev/kbq/internal/access"

	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/internal/postgres/blocks"
	"github.com/kbqdev/kbq/internal/reponame"
	"github.com/kbqdev/kbq/internal/visible"
)

// SchemaVersion is the newest schema this program reads. Versions 2 to 5
// changed only how the chunks' tsvectors and keys are kept, which kbq does
// not read; 6 added who may read what (each repository's visibility and
// org scope, the grants, row-level security); 7 the hashes of each block
// of a file, which let kbq read a file in part (FetchPartly).
const SchemaVersion = 7

var (
	// ErrNoKnowledge means the database holds no published knowledge.
	ErrNoKnowledge = errors.New("the database holds no kbq knowledge")
	// ErrNotPublished means a repository asked for was never published.
	ErrNotPublished = errors.New("not published")
)

// A Repo is a published repository, fetched: its name, the commit
// published, the artifact directory its files were placed in, who may
// read it (public, internal or private), and its place among the org
// scopes (0 when it is none).
type Repo struct {
	Name, Commit, Dir string
	Visibility        string
	OrgScope          int
}

// Fetched is what Fetch read: the repositories, and a note for each one
// left out because its rows cannot be read (a name kbq refuses, a file
// outside its artifact), which the others do not wait on; and the grants,
// when the session may read them (Grants is nil otherwise).
type Fetched struct {
	Repos  []Repo
	Notes  []string
	Grants []access.Grant
	// Remote, after FetchPartly, reads what was left in the database;
	// nil when every file was fetched whole.
	Remote *Remote
}

// Fetch reads the repositories names lists (every one when names is
// empty), and the org scopes in force in them, from the database: their files, those not yet in cache, are
// fetched into cache (by content) and placed in an artifact directory
// each. One read-only snapshot of the database is read, so a publish
// landing meanwhile is seen whole or not at all. A repository whose rows
// cannot be read is left out with a note; named in names, it is an error.
func Fetch(ctx context.Context, conn *pgx.Conn, cache string, names []string) (*Fetched, error) {
	return fetch(ctx, conn, cache, names, false)
}

// FetchPartly is Fetch leaving in the database what searches read
// piecemeal of large files, most of an artifact's size: a segment's
// stored fields, read by result, and its postings lists, read by term
// (query.PartlyRead). Fetched.Remote fetches what a search reads of them,
// checked block by block against the hashes kbc publish keeps (schema
// version 7; files published before are fetched whole), and Complete the
// rest. The session, conn, is then the Remote's, which closes it; it is
// closed now when the Remote is nil.
func FetchPartly(ctx context.Context, conn *pgx.Conn, cache string, names []string) (*Fetched, error) {
	f, err := fetch(ctx, conn, cache, names, true)
	if err != nil || f.Remote == nil {
		conn.Close(ctx)
	}
	return f, err
}

func fetch(ctx context.Context, conn *pgx.Conn, cache string, names []string, partly bool) (_ *Fetched, err error) {
	// Into an empty cache every file is fetched: the helper sessions are
	// opened at once, beside the queries that list them.
	blobs := filepath.Join(cache, "files")
	var early *dialed
	if emptyDir(blobs) && conn.Config().DefaultQueryExecMode != pgx.QueryExecModeSimpleProtocol {
		early = dial(ctx, conn.Config())
		defer early.drop()
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	version, err := checkSchema(ctx, tx)
	if err != nil {
		return nil, err
	}
	type repo struct {
		id                       int64
		name, commit, visibility string
		orgScope                 int
	}
	// Before version 6 every reader read every repository.
	columns := `'internal', 0`
	if version >= 6 {
		columns = `visibility, coalesce(org_scope, 0)`
	}
	rows, err := tx.Query(ctx, `SELECT id, name, commit, `+columns+` FROM kbq_repo ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var all []repo
	out := &Fetched{}
	for rows.Next() {
		var r repo
		if err := rows.Scan(&r.id, &r.name, &r.commit, &r.visibility, &r.orgScope); err != nil {
			return nil, err
		}
		// A name is printed and typed: one kbc publish would refuse is
		// not read (its bytes never reach a terminal raw).
		if err := reponame.Check(r.name); err != nil {
			out.Notes = append(out.Notes, fmt.Sprintf("repository row %d left out: %s", r.id, visible.Line(err.Error())))
			continue
		}
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(all) == 0 {
		var user string
		if err := tx.QueryRow(ctx, `SELECT session_user`).Scan(&user); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w that user %s may read: nothing was published there yet (kbc publish), or only private repositories no grant lets it read (kbc grant add role:%s PATTERN)", ErrNoKnowledge, visible.Line(user), visible.Line(user))
	}
	picked := all
	if len(names) > 0 {
		picked = nil
		var known []string
		for _, r := range all {
			known = append(known, r.name)
		}
		for _, n := range names {
			i := slices.IndexFunc(all, func(r repo) bool { return r.name == n })
			if i < 0 {
				return nil, fmt.Errorf("repository %s is %w in the database, or not permitted; published and permitted: %s", n, ErrNotPublished, strings.Join(known, ", "))
			}
			picked = append(picked, all[i])
		}
		// The org scopes are in force in the repositories named.
		for _, r := range all {
			if r.orgScope > 0 && !slices.Contains(names, r.name) {
				picked = append(picked, r)
			}
		}
	}
	ids := make([]int64, len(picked))
	for i, r := range picked {
		ids[i] = r.id
	}
	lists, damaged, err := fileLists(ctx, tx, ids, version)
	if err != nil {
		return nil, err
	}
	kept := picked[:0:0]
	for _, r := range picked {
		if why, bad := damaged[r.id]; bad {
			if len(names) > 0 {
				return nil, fmt.Errorf("%s: the database is damaged: %s", r.name, why)
			}
			out.Notes = append(out.Notes, fmt.Sprintf("%s left out: its rows are damaged: %s (publish it again)", r.name, why))
			continue
		}
		kept = append(kept, r)
	}
	picked = kept
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return nil, err
	}
	var missing []file
	have := map[string]bool{}
	for _, r := range picked {
		for _, f := range lists[r.id] {
			if have[f.hash] {
				continue
			}
			have[f.hash] = true
			if _, err := os.Stat(filepath.Join(blobs, f.hash)); err != nil {
				missing = append(missing, f)
			}
		}
	}
	// The helper sessions open while the partial files' tails are read.
	h := startHelpers(ctx, tx, missing, early)
	defer h.close()
	var remote *Remote
	if partly {
		if missing, remote, err = startPartials(ctx, tx, conn, blobs, missing); err != nil {
			return nil, err
		}
		defer func() {
			if err != nil {
				remote.Close()
			}
		}()
	}
	if _, err := fetchPieces(ctx, tx, h, blobs, missing, remote.tails()); err != nil {
		return nil, err
	}
	for _, r := range picked {
		dir, err := remote.place(cache, r.name, lists[r.id])
		if err != nil {
			if len(names) > 0 {
				return nil, fmt.Errorf("%s: %w", r.name, err)
			}
			out.Notes = append(out.Notes, fmt.Sprintf("%s left out: %v", r.name, err))
			continue
		}
		out.Repos = append(out.Repos, Repo{Name: r.name, Commit: r.commit, Dir: dir, Visibility: r.visibility, OrgScope: r.orgScope})
	}
	if len(out.Repos) == 0 {
		return nil, fmt.Errorf("%w: no repository of it can be read: %s", ErrNoKnowledge, strings.Join(out.Notes, "; "))
	}
	if version >= 6 {
		if out.Grants, err = grants(ctx, tx); err != nil {
			return nil, err
		}
	}
	var inUse []string
	for _, r := range out.Repos {
		inUse = append(inUse, r.Dir)
	}
	evict(cache, inUse, time.Now())
	if remote != nil && len(remote.partials) > 0 {
		out.Remote = remote
	}
	return out, nil
}

// emptyDir reports whether dir holds nothing or is not there.
func emptyDir(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return true
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) == 0
}

func checkSchema(ctx context.Context, tx pgx.Tx) (int, error) {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('kbq_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, err
	}
	if !exists {
		return 0, fmt.Errorf("%w: it has no kbq schema (publish into it with kbc publish)", ErrNoKnowledge)
	}
	var v *int
	if err := tx.QueryRow(ctx, `SELECT max(version) FROM kbq_schema`).Scan(&v); err != nil {
		return 0, err
	}
	if v == nil {
		return 0, fmt.Errorf("%w: its kbq_schema table holds no version (publish into it with kbc publish, which sets it up)", ErrNoKnowledge)
	}
	if *v > SchemaVersion {
		return 0, fmt.Errorf("the database's kbq schema (%d) is newer than this kbq reads (%d): upgrade kbq", *v, SchemaVersion)
	}
	return *v, nil
}

// grants reads the grants, nil when the session may not: a server that
// enforces them is granted SELECT on kbq_grant (docs/security.md).
func grants(ctx context.Context, tx pgx.Tx) ([]access.Grant, error) {
	var may bool
	if err := tx.QueryRow(ctx, `SELECT has_table_privilege('kbq_grant', 'SELECT')`).Scan(&may); err != nil || !may {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT principal, pattern FROM kbq_grant ORDER BY principal, pattern`)
	if err != nil {
		return nil, err
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[access.Grant])
	if out == nil && err == nil {
		out = []access.Grant{}
	}
	return out, err
}

// A file is one file of a published artifact: its name in the artifact
// directory, the SHA-256 of its content, its size, and, when it was
// published with them, the SHA-256 of each of its blocks.
type file struct {
	name, hash string
	size       int64
	blocks     []byte
}

// fileLists reads the files of the repositories ids, and says why the
// files of those it cannot use are damaged.
func fileLists(ctx context.Context, tx pgx.Tx, ids []int64, version int) (lists map[int64][]file, damaged map[int64]string, err error) {
	// Before version 7 no file has its blocks' hashes.
	blocksColumn := `NULL::bytea`
	if version >= 7 {
		blocksColumn = `f.blocks`
	}
	rows, err := tx.Query(ctx, `SELECT r.repo_id, r.name, r.hash, f.size, `+blocksColumn+` FROM kbq_repo_file r JOIN kbq_file f ON f.hash = r.hash
		WHERE r.repo_id = ANY($1) ORDER BY r.repo_id, r.name`, ids)
	if err != nil {
		return nil, nil, err
	}
	lists, damaged = map[int64][]file{}, map[int64]string{}
	for rows.Next() {
		var id int64
		var f file
		if err := rows.Scan(&id, &f.name, &f.hash, &f.size, &f.blocks); err != nil {
			return nil, nil, err
		}
		// The hash names a file of the cache, the name a file of the
		// artifact directory, and the size is allocated: a damaged or
		// hostile row must not reach outside the cache or exhaust memory.
		switch {
		case !sha256Hex(f.hash) || f.size < 0 || f.size > maxFileSize:
			damaged[id] = fmt.Sprintf("file %+q has the hash %+q and the size %d (want a SHA-256 and at most %d bytes)", f.name, f.hash, f.size, maxFileSize)
		case !local(f.name) || len(f.name) > 255:
			damaged[id] = fmt.Sprintf("the file name %+q is not one of an artifact", f.name)
		default:
			if f.blocks != nil && !blocks.Valid(f.blocks, f.size) {
				f.blocks = nil // fetched whole, and checked so
			}
			lists[id] = append(lists[id], f)
		}
	}
	return lists, damaged, rows.Err()
}

// sha256Hex reports whether h has the form of a file's hash: 64
// lowercase hexadecimal digits.
func sha256Hex(h string) bool {
	if len(h) != 64 {
		return false
	}
	for i := range len(h) {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// maxFileSize is the largest value PostgreSQL stores in a field: 1 GB.
const maxFileSize = 1 << 30

// place puts files into an artifact directory of the cache, linked from
// the fetched files, and returns it. A repository with files held in part
// is placed in a directory of r's, which r removes when it closes: another
// process must not take those files for whole ones. Repositories of the
// same files share one.
func (r *Remote) place(cache, name string, files []file) (string, error) {
	if r == nil || !slices.ContainsFunc(files, func(f file) bool { return r.partOf(f.hash) != nil }) {
		return place(cache, name, files)
	}
	key := filesKey(files)
	if dir, ok := r.dirs[key]; ok {
		return dir, nil
	}
	dir, err := os.MkdirTemp(cache, "placing-")
	if err != nil {
		return "", err
	}
	if r.dirs == nil {
		r.dirs = map[string]string{}
	}
	r.dirs[key] = dir
	for _, f := range files {
		src := filepath.Join(cache, "files", f.hash)
		if p := r.partOf(f.hash); p != nil {
			src = p.path
		}
		if err := link(src, dir, f.name); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// link links the file at src as name in the artifact directory dir.
func link(src, dir, name string) error {
	if !local(name) {
		return fmt.Errorf("the database names a file %q outside an artifact", name)
	}
	dst := filepath.Join(dir, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Link(src, dst)
}

// place puts files into an artifact directory of the cache, linked from
// the fetched files, and returns it.
func place(cache, name string, files []file) (string, error) {
	if len(files) == 0 {
		return "", fmt.Errorf("%w: it was published without its index (publish it again with this kbc)", ErrNotPublished)
	}
	// The artifact directory is named by what it holds.
	dir := filepath.Join(cache, "repos", safeName(name)+"-"+filesKey(files)[:16])
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Join(cache), "placing-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		if err := link(filepath.Join(cache, "files", f.hash), tmp, f.name); err != nil {
			return "", err
		}
	}
	os.MkdirAll(filepath.Dir(dir), 0o755)
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(filepath.Join(dir, "manifest.json")); serr == nil {
			return dir, nil // placed meanwhile by another kbq
		}
		return "", err
	}
	return dir, nil
}

// filesKey names the files of an artifact directory by what it holds.
func filesKey(files []file) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %s\n", f.name, f.hash)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// local reports whether name stays inside the artifact directory.
func local(name string) bool {
	return filepath.IsLocal(filepath.FromSlash(name))
}

// safeName is a repository name as a file name.
func safeName(name string) string {
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < ' ' {
			return '_'
		}
		return r
	}, name)
}
