package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// ErrNotPublished means no repository of the name is published.
var ErrNotPublished = errors.New("not published")

// Unpublished says what Unpublish removed.
type Unpublished struct {
	Commit    string // the commit that was published
	Documents int
}

// Unpublish removes repository name from the database in one transaction:
// its documents, chunks, vectors and file list, then the stored files and
// chunk texts no other repository names. It waits for a publish of the
// same repository to finish (the same advisory lock).
func Unpublish(ctx context.Context, conn *pgx.Conn, name string) (*Unpublished, error) {
	if v, err := Version(ctx, conn); err != nil {
		return nil, err
	} else if v == 0 {
		return nil, fmt.Errorf("repository %s is %w: the database holds no kbq knowledge", name, ErrNotPublished)
	} else if v > SchemaVersion {
		return nil, fmt.Errorf("%w: the database's kbq schema (%d) is newer than this kbc writes (%d): upgrade kbc", ErrSchemaNewer, v, SchemaVersion)
	}
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.ReadCommitted})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, repoLock(name)); err != nil {
		return nil, err
	}
	var id int64
	out := &Unpublished{}
	err = tx.QueryRow(ctx, `SELECT id, commit, (SELECT count(*) FROM kbq_document d WHERE d.repo_id = r.id) FROM kbq_repo r WHERE name = $1`, name).
		Scan(&id, &out.Commit, &out.Documents)
	if errors.Is(err, pgx.ErrNoRows) {
		var names []string
		rows, qerr := tx.Query(ctx, `SELECT name FROM kbq_repo ORDER BY name`)
		if qerr == nil {
			names, qerr = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		if qerr != nil || len(names) == 0 {
			return nil, fmt.Errorf("repository %s is %w: none is", name, ErrNotPublished)
		}
		return nil, fmt.Errorf("repository %s is %w; published: %s", name, ErrNotPublished, strings.Join(names, ", "))
	}
	if err != nil {
		return nil, err
	}
	// The texts its chunks name, to remove those no other chunk names.
	rows, err := tx.Query(ctx, `SELECT DISTINCT text_key FROM kbq_chunk WHERE repo_id = $1`, id)
	if err != nil {
		return nil, err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
	if err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM kbq_repo WHERE id = $1`, id); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM kbq_file f WHERE NOT EXISTS (SELECT 1 FROM kbq_repo_file r WHERE r.hash = f.hash)`); err != nil {
		return nil, err
	}
	if err := removeTexts(ctx, tx, keys); err != nil {
		return nil, err
	}
	return out, tx.Commit(ctx)
}
