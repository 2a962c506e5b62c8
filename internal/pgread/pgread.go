// Package pgread reads the knowledge kbc publish keeps in PostgreSQL, for
// kbq --db: each repository's artifact files, stored by content, are
// fetched once into a local cache and opened as artifacts, so that a
// search of the database ranks exactly as a search of the repositories'
// own artifacts (query.Union across them). kbq connects with a role that
// only reads; every value reaches SQL as a parameter.
package pgread

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
)

// SchemaVersion is the newest schema this program reads. Version 2
// changed only how kbq_chunk.tsv is written, which kbq does not read.
const SchemaVersion = 2

var (
	// ErrNoKnowledge means the database holds no published knowledge.
	ErrNoKnowledge = errors.New("the database holds no kbq knowledge")
	// ErrNotPublished means a repository asked for was never published.
	ErrNotPublished = errors.New("not published")
)

// A Repo is a published repository, fetched: its name, the commit
// published, and the artifact directory its files were placed in.
type Repo struct {
	Name, Commit, Dir string
}

// Fetch reads the repositories names lists (every one when names is
// empty) from the database: their files, those not yet in cache, are
// fetched into cache (by content) and placed in an artifact directory
// each. One read-only snapshot of the database is read, so a publish
// landing meanwhile is seen whole or not at all.
func Fetch(ctx context.Context, conn *pgx.Conn, cache string, names []string) ([]Repo, error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if err := checkSchema(ctx, tx); err != nil {
		return nil, err
	}
	type repo struct {
		id           int64
		name, commit string
	}
	rows, err := tx.Query(ctx, `SELECT id, name, commit FROM kbq_repo ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var all []repo
	for rows.Next() {
		var r repo
		if err := rows.Scan(&r.id, &r.name, &r.commit); err != nil {
			return nil, err
		}
		all = append(all, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(all) == 0 {
		return nil, fmt.Errorf("%w: nothing was published there yet (kbc publish)", ErrNoKnowledge)
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
				return nil, fmt.Errorf("repository %s is %w in the database; published: %s", n, ErrNotPublished, strings.Join(known, ", "))
			}
			picked = append(picked, all[i])
		}
	}
	var out []Repo
	for _, r := range picked {
		dir, err := place(ctx, tx, cache, r.id, r.name, r.commit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.name, err)
		}
		out = append(out, Repo{Name: r.name, Commit: r.commit, Dir: dir})
	}
	return out, nil
}

func checkSchema(ctx context.Context, tx pgx.Tx) error {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('kbq_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return err
	}
	if !exists {
		return fmt.Errorf("%w: it has no kbq schema (publish into it with kbc publish)", ErrNoKnowledge)
	}
	var v int
	if err := tx.QueryRow(ctx, `SELECT max(version) FROM kbq_schema`).Scan(&v); err != nil {
		return err
	}
	if v > SchemaVersion {
		return fmt.Errorf("the database's kbq schema (%d) is newer than this kbq reads (%d): upgrade kbq", v, SchemaVersion)
	}
	return nil
}

// place puts the files of repository id into an artifact directory of
// the cache, fetching those the cache lacks, and returns it.
func place(ctx context.Context, tx pgx.Tx, cache string, id int64, name, commit string) (string, error) {
	type file struct{ name, hash string }
	rows, err := tx.Query(ctx, `SELECT name, hash FROM kbq_repo_file WHERE repo_id = $1 ORDER BY name`, id)
	if err != nil {
		return "", err
	}
	var files []file
	for rows.Next() {
		var f file
		if err := rows.Scan(&f.name, &f.hash); err != nil {
			return "", err
		}
		files = append(files, f)
	}
	if err := rows.Err(); err != nil {
		return "", err
	}
	if len(files) == 0 {
		return "", fmt.Errorf("%w: it was published without its index (publish it again with this kbc)", ErrNotPublished)
	}
	blobs := filepath.Join(cache, "files")
	if err := os.MkdirAll(blobs, 0o755); err != nil {
		return "", err
	}
	// The artifact directory is named by what it holds.
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s %s\n", f.name, f.hash)
	}
	dir := filepath.Join(cache, "repos", safeName(name)+"-"+hex.EncodeToString(h.Sum(nil))[:16])
	if _, err := os.Stat(filepath.Join(dir, "manifest.json")); err == nil {
		return dir, nil
	}
	tmp, err := os.MkdirTemp(filepath.Join(cache), "placing-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	for _, f := range files {
		blob := filepath.Join(blobs, f.hash)
		if _, err := os.Stat(blob); err != nil {
			if err := fetch(ctx, tx, f.hash, blob); err != nil {
				return "", err
			}
		}
		dst := filepath.Join(tmp, filepath.FromSlash(f.name))
		if !local(f.name) {
			return "", fmt.Errorf("the database names a file %q outside an artifact", f.name)
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return "", err
		}
		if err := os.Link(blob, dst); err != nil {
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

// fetch writes the file of hash into path, checking its content.
func fetch(ctx context.Context, tx pgx.Tx, hash, path string) error {
	var data []byte
	if err := tx.QueryRow(ctx, `SELECT data FROM kbq_file WHERE hash = $1`, hash).Scan(&data); err != nil {
		return fmt.Errorf("read file %.12s: %w", hash, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != hash {
		return fmt.Errorf("file %.12s does not match its hash: the database is damaged", hash)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o444); err != nil {
		return err
	}
	return os.Rename(tmp, path)
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
