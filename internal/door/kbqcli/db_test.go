package kbqcli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/postgres/pgread"
	"github.com/kbqdev/kbq/internal/postgres/pgstoretest"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/testkb"
)

// kbq search --db reads a large artifact in part, prints what its search
// read, and then keeps the rest of the files whole in the cache, where
// the next search finds everything: closing what it read, or leaving
// that to the process's exit (cli.Streams.Exits), as the kbq command does.
func TestSearchReadsTheDatabaseInPart(t *testing.T) {
	for _, exits := range []bool{false, true} {
		t.Run(fmt.Sprintf("exits=%v", exits), func(t *testing.T) { testSearchReadsTheDatabaseInPart(t, exits) })
	}
}

func testSearchReadsTheDatabaseInPart(t *testing.T, exits bool) {
	old := pgread.PartlyMin
	pgread.PartlyMin = 0
	t.Cleanup(func() { pgread.PartlyMin = old })
	url := pgtest.DB(t)
	files := testkb.Files{}
	for i := range 300 {
		files[fmt.Sprintf(".kb/notes/n%03d.md", i)] = fmt.Sprintf("# Note %d\n\n%s\n", i, strings.Repeat(fmt.Sprintf("Rotate key %d of the signing service every %d days. ", i, 30+i), 8))
	}
	pgstoretest.Publish(t, url, "api", "a", files)
	cache := t.TempDir()
	env := map[string]string{"XDG_CACHE_HOME": cache, "KBQ_USAGE": "off"}
	search := func() string {
		var out, errs strings.Builder
		s := &cli.Streams{Out: &out, Err: &errs, Getenv: func(k string) string { return env[k] }, Exits: exits}
		if code := Main([]string{"search", "--db", url, "key 123 signing"}, s); code != 0 {
			t.Fatalf("exit %d: %s", code, errs.String())
		}
		if errs.Len() > 0 {
			t.Errorf("stderr: %s", errs.String())
		}
		return out.String()
	}
	if got := search(); !strings.Contains(got, "Rotate key 123 of the signing service every 153 days") {
		t.Fatalf("read in part: %s", got)
	}
	db := filepath.Join(cache, "kbq", "db")
	left, _ := filepath.Glob(filepath.Join(db, "files", "partial-*"))
	placing, _ := filepath.Glob(filepath.Join(db, "placing-*"))
	if len(left)+len(placing) > 0 {
		t.Errorf("left in the cache: %v %v", left, placing)
	}
	if dirs, _ := os.ReadDir(filepath.Join(db, "repos")); len(dirs) != 0 {
		t.Errorf("an artifact directory was placed for files held in part: %v", dirs)
	}
	whole, _ := os.ReadDir(filepath.Join(db, "files"))
	if got := search(); !strings.Contains(got, "Rotate key 123 of the signing service every 153 days") {
		t.Fatalf("read from the cache: %s", got)
	}
	if again, _ := os.ReadDir(filepath.Join(db, "files")); len(again) != len(whole) {
		t.Errorf("the second search fetched files again: %d, then %d", len(whole), len(again))
	}
}
