package pgstore

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/postgres/blocks"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
)

// undoBlocks brings a database of schema version 7 back to 6.
var undoBlocks = []string{`ALTER TABLE kbq_file DROP COLUMN blocks`, `UPDATE kbq_schema SET version = 6`}

// undoAccess brings a database of schema version 7 back to 5.
var undoAccess = func() []string {
	out := slices.Clone(undoBlocks)
	for _, t := range []string{"kbq_repo", "kbq_document", "kbq_chunk", "kbq_repo_file", "kbq_text", "kbq_file"} {
		out = append(out, `DROP POLICY kbq_read ON `+t, `ALTER TABLE `+t+` DISABLE ROW LEVEL SECURITY`)
	}
	return append(out,
		`ALTER VIEW kbq_chunk_search RESET (security_invoker)`,
		`DROP FUNCTION kbq_may_read`, `DROP FUNCTION kbq_pattern_matches`, `DROP TABLE kbq_grant`,
		`DROP INDEX kbq_repo_file_hash`, `ALTER TABLE kbq_repo DROP COLUMN visibility, DROP COLUMN org_scope`)
}()

// A database role reads exactly the repositories its grants and their
// visibility allow, in every kbq table and the search view; a text or
// file shared with a repository it may not read is read through the one
// it may.
func TestRowLevelSecurity(t *testing.T) {
	ctx := context.Background()
	url, owner := publishedDB(t, "github.com/acme/private", testkb.Files{
		".kb/secret.md": "# Secret\n\nThe launch is on the ninth.\n",
		".kb/shared.md": "# Shared\n\nEveryone deploys with make deploy.\n",
	})
	if _, err := Publish(ctx, owner, source(t, "github.com/acme/open", "a", testkb.Files{
		".kb/shared.md": "# Shared\n\nEveryone deploys with make deploy.\n",
	}), Options{Visibility: "internal"}); err != nil {
		t.Fatal(err)
	}
	if _, err := Publish(ctx, owner, source(t, "github.com/other/lib", "a", testkb.Files{".kb/lib.md": "# Lib\n\nThe library.\n"}), Options{}); err != nil {
		t.Fatal(err)
	}
	granted, plain := pgtest.Role(url, "granted"), pgtest.Role(url, "plain")
	pgtest.Exec(t, url, ReadOnlyGrants(granted)...)
	pgtest.Exec(t, url, ReadOnlyGrants(plain)...)
	if added, err := AddGrant(ctx, owner, Grant{Principal: "role:" + granted, Pattern: "github.com/acme/*"}); err != nil || !added {
		t.Fatalf("grant: %v %v", added, err)
	}
	for role, want := range map[string]map[string]int{
		granted: {"kbq_repo": 2, "kbq_document": 3, "kbq_chunk": 3, "kbq_chunk_search": 3, "kbq_text": 2, "kbq_grant": 0},
		plain:   {"kbq_repo": 1, "kbq_document": 1, "kbq_chunk": 1, "kbq_chunk_search": 1, "kbq_text": 1},
	} {
		rc := pgtest.Connect(t, strings.Replace(url, "kbq@", role+"@", 1))
		for table, n := range want {
			if table == "kbq_grant" {
				if _, err := rc.Exec(ctx, `SELECT * FROM kbq_grant`); err == nil || !strings.Contains(err.Error(), "permission denied") {
					t.Errorf("%s read the grants: %v", role, err)
				}
				continue
			}
			if got := count(t, rc, `SELECT count(*) FROM `+table); got != n {
				t.Errorf("%s sees %d rows of %s, want %d", role, got, table, n)
			}
		}
		if got := count(t, rc, `SELECT count(*) FROM kbq_chunk_search WHERE body LIKE '%ninth%'`); (got > 0) != (role == granted) {
			t.Errorf("%s sees %d chunks of the private repository", role, got)
		}
		// The files of the artifacts, by the repositories named.
		files := count(t, rc, `SELECT count(*) FROM kbq_file`)
		repoFiles := count(t, rc, `SELECT count(DISTINCT hash) FROM kbq_repo_file`)
		if files != repoFiles || files == 0 {
			t.Errorf("%s sees %d files and %d named by its repositories", role, files, repoFiles)
		}
	}
	// Removing the grant takes the rows away at once.
	if removed, err := RemoveGrant(ctx, owner, Grant{Principal: "role:" + granted, Pattern: "github.com/acme/*"}); err != nil || !removed {
		t.Fatalf("remove: %v %v", removed, err)
	}
	rc := pgtest.Connect(t, strings.Replace(url, "kbq@", granted+"@", 1))
	if got := count(t, rc, `SELECT count(*) FROM kbq_repo`); got != 1 {
		t.Errorf("after the grant was removed, %d repositories", got)
	}
	grants, err := Grants(ctx, owner)
	if err != nil || len(grants) != 0 {
		t.Errorf("grants: %v %v", grants, err)
	}
	for _, bad := range []Grant{{Principal: "alice", Pattern: "*"}, {Principal: "user:", Pattern: "*"}, {Principal: "team:x", Pattern: "*"}, {Principal: "user:a", Pattern: " "}} {
		if _, err := AddGrant(ctx, owner, bad); !errors.Is(err, ErrGrant) {
			t.Errorf("%+v: %v", bad, err)
		}
	}
}

// A repository's visibility and org scope are set by a publish, kept by
// one that says nothing of them, and a republish that changes nothing
// writes nothing.
func TestVisibilityAndOrgScope(t *testing.T) {
	ctx := context.Background()
	url, conn := publishedDB(t, "r", files)
	_ = url
	row := func() (vis string, org *int) {
		t.Helper()
		if err := conn.QueryRow(ctx, `SELECT visibility, org_scope FROM kbq_repo WHERE name = 'r'`).Scan(&vis, &org); err != nil {
			t.Fatal(err)
		}
		return vis, org
	}
	if vis, org := row(); vis != "private" || org != nil {
		t.Errorf("first publish: %s %v", vis, org)
	}
	if _, err := Publish(ctx, conn, source(t, "r", "b", files), Options{IsAncestor: history, Visibility: "public", OrgScope: "on"}); err != nil {
		t.Fatal(err)
	}
	if vis, org := row(); vis != "public" || org == nil || *org != 1 {
		t.Errorf("marked: %s %v", vis, org)
	}
	if _, err := Publish(ctx, conn, source(t, "r", "b", files), Options{IsAncestor: history}); err != nil {
		t.Fatal(err)
	}
	if vis, org := row(); vis != "public" || org == nil {
		t.Errorf("kept: %s %v", vis, org)
	}
	if _, err := Publish(ctx, conn, source(t, "r", "b", files), Options{IsAncestor: history, OrgScope: "off"}); err != nil {
		t.Fatal(err)
	}
	if _, org := row(); org != nil {
		t.Errorf("unmarked: %v", *org)
	}
	if _, err := Publish(ctx, conn, source(t, "r", "c", files), Options{IsAncestor: history, Visibility: "secret"}); err == nil {
		t.Error("a visibility of no name was taken")
	}
}

// A database of version 5 is migrated to 6 with nothing read otherwise:
// its repositories are internal, and every role that read them is
// granted all.
func TestMigrateFromVersion5(t *testing.T) {
	ctx := context.Background()
	url, conn := publishedDB(t, "r", files)
	reader := pgtest.Role(url, "old")
	pgtest.Exec(t, url, undoAccess...)
	pgtest.Exec(t, url, `UPDATE kbq_schema SET version = 5`)
	pgtest.Exec(t, url, ReadOnlyGrants(reader)...)
	if err := Migrate(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if v, err := Version(ctx, conn); err != nil || v != SchemaVersion {
		t.Fatalf("version %d %v", v, err)
	}
	grants, err := Grants(ctx, conn)
	if err != nil || len(grants) != 1 || grants[0] != (Grant{Principal: "role:" + reader, Pattern: "*"}) {
		t.Errorf("grants after migrating: %v %v", grants, err)
	}
	rc := pgtest.Connect(t, strings.Replace(url, "kbq@", reader+"@", 1))
	if n := count(t, rc, `SELECT count(*) FROM kbq_chunk_search`); n != 3 {
		t.Errorf("the old reader sees %d chunks", n)
	}
	if n := count(t, conn, `SELECT count(*) FROM kbq_repo WHERE visibility = 'internal'`); n != 1 {
		t.Errorf("%d internal repositories", n)
	}
}

// Every file is published with the hashes of its blocks; a database of
// version 6 is migrated to 7 with its files' blocks unhashed, and a
// publish that names a file again hashes them.
func TestFilesCarryTheirBlocksHashes(t *testing.T) {
	ctx := context.Background()
	url, conn := publishedDB(t, "r", files)
	hashed := func() (int, int) {
		var all, right int
		rows, err := conn.Query(ctx, `SELECT data, blocks FROM kbq_file`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var data, hashes []byte
			if err := rows.Scan(&data, &hashes); err != nil {
				t.Fatal(err)
			}
			all++
			if hashes != nil && bytes.Equal(hashes, blocks.Hashes(data)) {
				right++
			}
		}
		return all, right
	}
	if all, right := hashed(); all == 0 || right != all {
		t.Fatalf("%d of %d files published with their blocks' hashes", right, all)
	}
	pgtest.Exec(t, url, undoBlocks...)
	if err := Migrate(ctx, conn); err != nil {
		t.Fatal(err)
	}
	if v, err := Version(ctx, conn); err != nil || v != SchemaVersion {
		t.Fatalf("version %d %v", v, err)
	}
	if all, right := hashed(); right != 0 {
		t.Fatalf("migrated, %d of %d files have hashes they were never given", right, all)
	}
	if _, err := Publish(ctx, conn, source(t, "r", "a", files), Options{}); err != nil {
		t.Fatal(err)
	}
	if all, right := hashed(); right != all {
		t.Errorf("published again, %d of %d files have their blocks' hashes", right, all)
	}
}
