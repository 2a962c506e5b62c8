// Package pgstoretest publishes knowledge bases for the tests of what
// reads a database: the reader's, the servers' and the command line's.
package pgstoretest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kbqdev/kbq/internal/postgres/pgstore"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
)

// Publish compiles files and publishes the artifact into the database at
// url as repository repo at commit (a publish of a commit already there
// writes it again), and returns the artifact's directory.
func Publish(t testing.TB, url, repo, commit string, files testkb.Files) string {
	t.Helper()
	return PublishOver(t, pgtest.Connect(t, url), repo, commit, files)
}

// PublishOver is Publish over the session conn.
func PublishOver(t testing.TB, conn *pgx.Conn, repo, commit string, files testkb.Files) string {
	t.Helper()
	dir := testkb.Build(t, files)
	src, closeSource, err := pgstore.OpenSource(dir, repo)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSource()
	src.Commit = commit
	if _, err := pgstore.Publish(context.Background(), conn, src, pgstore.Options{Force: true}); err != nil {
		t.Fatal(err)
	}
	return dir
}
