package pgread

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kbqdev/kbq/internal/postgres/pgstore"
	"github.com/kbqdev/kbq/internal/postgres/pgstoretest"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
)

// published publishes a few dozen notes as repository r and returns the
// artifact's directory.
func published(t *testing.T, url string) string {
	t.Helper()
	files := testkb.Files{}
	for i := range 40 {
		files[fmt.Sprintf(".kb/notes/n%02d.md", i)] = fmt.Sprintf("# Note %d\n\nRotate key %d of the signing service every %d days.\n", i, i, 30+i)
	}
	return pgstoretest.Publish(t, url, "r", "a", files)
}

// setFor sets *v to value until the test ends.
func setFor[T any](t *testing.T, v *T, value T) {
	old := *v
	*v = value
	t.Cleanup(func() { *v = old })
}

// small makes files span many pieces for the test.
func small(t *testing.T) { setFor(t, &pieceSize, 1000) }

// Files of several pieces are read by several sessions of one snapshot,
// a read-only role's included, and put together byte for byte.
func TestFetchReadsPiecesSideBySide(t *testing.T) {
	small(t)
	ctx := context.Background()
	url := pgtest.DB(t)
	dir := published(t, url)
	pgtest.Exec(t, url, pgstore.ReadOnlyGrants("kbq_reader")...)
	pgtest.Exec(t, url, `INSERT INTO kbq_grant VALUES ('role:kbq_reader', '*') ON CONFLICT DO NOTHING`)
	conn := pgtest.Connect(t, strings.Replace(url, "kbq@", "kbq_reader@", 1))

	tx, err := conn.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	var files []file
	var total int64
	rows, _ := tx.Query(ctx, `SELECT hash, hash, size FROM kbq_file`)
	for rows.Next() {
		var f file
		if err := rows.Scan(&f.name, &f.hash, &f.size); err != nil {
			t.Fatal(err)
		}
		files, total = append(files, f), total+f.size
	}
	if total < 20*pieceSize {
		t.Fatalf("the artifact's %d bytes are too few pieces for the test", total)
	}
	blobs := t.TempDir()
	h := startHelpers(ctx, tx, files, nil)
	defer h.close()
	readers, err := fetchPieces(ctx, tx, h, blobs, files, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := 1 + helpersFor(conn.Config()); readers != want || readers < 2 {
		t.Errorf("%d sessions read, want %d (and two at least)", readers, want)
	}
	tx.Rollback(ctx)

	f, err := Fetch(ctx, conn, t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	repos := f.Repos
	compared := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.Contains(p, string(filepath.Separator)+"published") {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got, err := os.ReadFile(filepath.Join(repos[0].Dir, rel))
		if os.IsNotExist(err) {
			return nil // a file kbq does not read, not published
		}
		want, _ := os.ReadFile(p)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: fetched %d bytes that differ from the artifact's %d", rel, len(got), len(want))
		}
		compared++
		return nil
	})
	if compared < 3 {
		t.Errorf("only %d files compared", compared)
	}
}

// A file damaged in the database is refused, whichever piece is damaged.
func TestFetchRefusesDamage(t *testing.T) {
	small(t)
	ctx := context.Background()
	for name, damage := range map[string]string{
		"does not match its hash": `UPDATE kbq_file SET data = overlay(data PLACING '\xff'::bytea FROM size::int - 10) WHERE size = (SELECT max(size) FROM kbq_file)`,
		"shorter than its size":   `UPDATE kbq_file SET data = substring(data FROM 1 FOR size::int - 1500) WHERE size = (SELECT max(size) FROM kbq_file)`,
		// A hash that is a path, and a size that would exhaust memory.
		`has the hash "../../../../etc/passwd"`: `INSERT INTO kbq_file (hash, size, data) VALUES ('../../../../etc/passwd', 1, '\x00');
			UPDATE kbq_repo_file SET hash = '../../../../etc/passwd' WHERE name = 'manifest.json'`,
		"and the size 1000000000000": `UPDATE kbq_file SET size = 1000000000000 WHERE size = (SELECT max(size) FROM kbq_file)`,
	} {
		url := pgtest.DB(t)
		published(t, url)
		pgtest.Exec(t, url, damage)
		_, err := Fetch(ctx, pgtest.Connect(t, url), t.TempDir(), nil)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: fetch said %v", name, err)
		}
	}
}

// The forms a snapshot's name and a file's hash must have, checked
// without a regular expression.
func TestIdentifierForms(t *testing.T) {
	for id, want := range map[string]bool{
		"00000003-0000001B-1": true, "abcDEF-09": true, "": false, "0000 1": false, "00;DROP": false, "g0": false,
	} {
		if got := snapshotID(id); got != want {
			t.Errorf("snapshotID(%q) = %v, want %v", id, got, want)
		}
	}
	hash := strings.Repeat("0123456789abcdef", 4)
	for h, want := range map[string]bool{
		hash: true, hash[:63]: false, hash + "0": false, strings.ToUpper(hash): false, hash[:63] + "g": false, "": false,
	} {
		if got := sha256Hex(h); got != want {
			t.Errorf("sha256Hex(%q) = %v, want %v", h, got, want)
		}
	}
}

// A server on this machine gets no more helper sessions than there are
// processors beside the caller's session; one elsewhere gets them all.
func TestHelpersFor(t *testing.T) {
	local := max(1, min(fetchHelpers, runtime.GOMAXPROCS(0)-1))
	for host, want := range map[string]int{
		"127.0.0.1": local, "::1": local, "localhost": local, "/var/run/postgresql": local,
		"db.example.com": fetchHelpers, "10.0.0.7": fetchHelpers,
	} {
		if got := helpersFor(&pgx.ConnConfig{Config: pgconn.Config{Host: host}}); got != want {
			t.Errorf("host %q: %d helpers, want %d", host, got, want)
		}
	}
}

// The helper sessions a fetch into an empty cache opens early are closed
// when they are used, when the cache turns out to hold the files, and when
// the fetch fails before it reads any.
func TestFetchLeavesNoSessions(t *testing.T) {
	small(t)
	ctx := context.Background()
	url := pgtest.DB(t)
	published(t, url)
	conn := pgtest.Connect(t, url)
	count := func() (n int) {
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	// The publish's own sessions close in the background: the count is
	// taken once it holds still.
	before := count()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		n := count()
		if n == before {
			break
		}
		before = n
	}
	cache := t.TempDir()
	if _, err := Fetch(ctx, conn, cache, []string{"no-such-repo"}); !errors.Is(err, ErrNotPublished) {
		t.Fatalf("a repository not published: %v", err)
	}
	if _, err := Fetch(ctx, conn, cache, nil); err != nil { // empty: early helpers, used
		t.Fatal(err)
	}
	if _, err := Fetch(ctx, conn, cache, nil); err != nil { // every file cached
		t.Fatal(err)
	}
	if _, err := Fetch(ctx, conn, t.TempDir(), []string{"no-such-repo"}); !errors.Is(err, ErrNotPublished) {
		t.Fatalf("a repository not published: %v", err)
	}
	after := count()
	for deadline := time.Now().Add(5 * time.Second); after > before && time.Now().Before(deadline); after = count() {
		time.Sleep(20 * time.Millisecond) // sessions are closed in the background
	}
	if after != before {
		t.Errorf("%d sessions open after the fetches, %d before", after, before)
	}
}
