package pgread

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/kbqdev/kbq/internal/postgres/blocks"
	"github.com/kbqdev/kbq/internal/postgres/pgstoretest"
	"github.com/kbqdev/kbq/internal/postgres/pgtest"
	"github.com/kbqdev/kbq/internal/querytest"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// publishedLarge publishes, as repository r, notes enough that the
// segment's stored fields and postings lists take several blocks, and
// returns the artifact's directory.
func publishedLarge(t *testing.T, url string) string {
	t.Helper()
	return publishedLargeAs(t, url, "r")
}

// publishedLargeAs is publishedLarge as repository name.
func publishedLargeAs(t *testing.T, url, name string) string {
	t.Helper()
	files := testkb.Files{}
	words := strings.Fields("rotate signing key service deploy rollback canary region quota cache token session ledger invoice")
	for i := range 400 {
		var b strings.Builder
		fmt.Fprintf(&b, "# Note %d %s\n\n", i, words[i%len(words)])
		for j := range 12 {
			fmt.Fprintf(&b, "%s the %s of unit%d every %d days, then %s it. ", words[(i+j)%len(words)], words[(i*j)%len(words)], i*13+j, 30+i%9, words[(i+3*j)%len(words)])
		}
		files[fmt.Sprintf(".kb/notes/n%03d.md", i)] = b.String() + "\n"
	}
	return pgstoretest.Publish(t, url, name, "a", files)
}

// answersOf is what a few searches and a get of every document answer.
func answersOf(t *testing.T, dir string) string {
	t.Helper()
	var reqs []query.Request
	for _, q := range []string{"rotate signing", "unit1*", `"deploy the"`, "ledger -invoice", "title:canary", "quota"} {
		reqs = append(reqs, query.Request{Query: q, N: 20})
	}
	return querytest.Answers(t, dir, reqs)
}

// partlyFromAll reads every file of a segment in part, however small.
func partlyFromAll(t *testing.T) { setFor(t, &PartlyMin, 0) }

// FetchPartly fetches the tables every search reads, and searches fetch
// the blocks of postings and stored fields they read, checked: the
// artifact answers as the published one. Complete then keeps the files
// whole in the cache, and the next fetch finds them there.
func TestFetchPartlyReadsWhatSearchesNeed(t *testing.T) {
	partlyFromAll(t)
	ctx := context.Background()
	url := pgtest.DB(t)
	dir := publishedLarge(t, url)
	want := answersOf(t, dir)
	cache := t.TempDir()

	f, err := FetchPartly(ctx, pgtest.Connect(t, url), cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	r := f.Remote
	if r == nil || len(r.partials) != 3 {
		t.Fatalf("fetched with %+v, want the segment, its postings and the document table in part", r)
	}
	var left int64
	for _, p := range r.partials {
		if query.ReadWhenNeeded(p.name) {
			if p.tail != p.size {
				t.Errorf("%s: fetched from %d of %d bytes, want none of it", p.name, p.tail, p.size)
			}
			left += p.tail
			continue
		}
		if p.tail < blocks.Size {
			t.Fatalf("%s: the blocks every search reads begin at %d: too few blocks for the test", p.name, p.tail)
		}
		left += p.tail
	}
	if got := answersOf(t, f.Repos[0].Dir); got != want {
		t.Errorf("read in part, the artifact answers otherwise:\n%s\npublished:\n%s", got, want)
	}
	if n := r.Bytes(); n == 0 || n > left {
		t.Errorf("the searches fetched %d bytes of the %d left in the database", n, left)
	}

	if err := r.Complete(ctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range r.partials {
		got, err := os.ReadFile(filepath.Join(cache, "files", p.hash))
		if err != nil {
			t.Fatal(err)
		}
		whole, _ := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p.name)))
		if !bytes.Equal(got, whole) {
			t.Errorf("%s kept in the cache differs from the artifact's", p.name)
		}
		if _, err := os.Stat(p.path); !os.IsNotExist(err) {
			t.Errorf("%s: the partial file is still there (%v)", p.name, err)
		}
	}
	if got := answersOf(t, f.Repos[0].Dir); got != want {
		t.Error("after Complete, the artifact answers otherwise")
	}
	r.Close()
	if _, err := os.Stat(f.Repos[0].Dir); !os.IsNotExist(err) {
		t.Errorf("the artifact directory of partial files is still there (%v)", err)
	}

	again, err := FetchPartly(ctx, pgtest.Connect(t, url), cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.Remote != nil {
		t.Errorf("fetched again with %d partial files; the cache holds them whole", len(again.Remote.partials))
	}
	if got := answersOf(t, again.Repos[0].Dir); got != want {
		t.Error("from the cache, the artifact answers otherwise")
	}
}

// A damaged block of what searches fetch fails the search that reads it,
// naming the damage, rather than answering from it; a damaged block of
// what every search reads fails the fetch; a file published without its
// blocks' hashes is fetched whole.
func TestFetchPartlyChecksEveryBlock(t *testing.T) {
	partlyFromAll(t)
	ctx := context.Background()
	t.Run("fetched by a search", func(t *testing.T) {
		url := pgtest.DB(t)
		publishedLarge(t, url)
		pgtest.Exec(t, url, `UPDATE kbq_file SET data = overlay(data PLACING '\xffffffff'::bytea FROM 100) WHERE size = (SELECT max(size) FROM kbq_file)`)
		f, err := FetchPartly(ctx, pgtest.Connect(t, url), t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Remote.Close()
		ix, err := query.Open(f.Repos[0].Dir)
		if err != nil {
			t.Fatal(err)
		}
		defer ix.Close()
		failed := false
		for _, q := range []string{"rotate", "ledger", "quota", "canary", "*"} {
			_, err := ix.Search(ctx, query.Request{Query: q, N: 50})
			if err != nil && !strings.Contains(err.Error(), "does not match its hash: the database is damaged") {
				t.Errorf("%s: %v", q, err)
			}
			failed = failed || err != nil
		}
		if !failed {
			t.Error("no search read the damaged block")
		}
		if err := f.Remote.Complete(ctx); err == nil || !strings.Contains(err.Error(), "damaged") {
			t.Errorf("Complete said %v", err)
		}
	})
	t.Run("fetched with the file", func(t *testing.T) {
		url := pgtest.DB(t)
		publishedLarge(t, url)
		pgtest.Exec(t, url, `UPDATE kbq_file SET data = overlay(data PLACING '\xffffffff'::bytea FROM size::int - 100) WHERE size = (SELECT max(size) FROM kbq_file)`)
		if _, err := FetchPartly(ctx, pgtest.Connect(t, url), t.TempDir(), nil); err == nil || !strings.Contains(err.Error(), "does not match its hash") {
			t.Errorf("fetch said %v", err)
		}
	})
	t.Run("published without block hashes", func(t *testing.T) {
		url := pgtest.DB(t)
		dir := publishedLarge(t, url)
		pgtest.Exec(t, url, `UPDATE kbq_file SET blocks = NULL`)
		f, err := FetchPartly(ctx, pgtest.Connect(t, url), t.TempDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if f.Remote != nil {
			t.Fatalf("%d files fetched in part without their blocks' hashes", len(f.Remote.partials))
		}
		if answersOf(t, f.Repos[0].Dir) != answersOf(t, dir) {
			t.Error("fetched whole, the artifact answers otherwise")
		}
	})
}

// Repositories of the same files read in part share them: searches of
// their union, side by side, fetch each block once and answer as the
// union fetched whole.
func TestFetchPartlyUnionSideBySide(t *testing.T) {
	partlyFromAll(t)
	ctx := context.Background()
	url := pgtest.DB(t)
	publishedLargeAs(t, url, "r")
	publishedLargeAs(t, url, "s")
	union := func(f *Fetched) *query.Union {
		var parts []query.Part
		for _, r := range f.Repos {
			ix, err := query.Open(r.Dir)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ix.Close() })
			parts = append(parts, query.Part{Name: r.Name, Index: ix})
		}
		u, err := query.NewUnion(parts)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	queries := []string{"rotate signing", "unit2*", "ledger", "quota -cache", "token session", "title:canary"}
	search := func(u *query.Union, q string) string {
		resp, err := u.Search(ctx, query.Request{Query: q, N: 30})
		if err != nil {
			t.Error(err)
			return ""
		}
		data, _ := json.Marshal(resp)
		return string(data)
	}
	whole, err := Fetch(ctx, pgtest.Connect(t, url), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, q := range queries {
		want[q] = search(union(whole), q)
	}

	part, err := FetchPartly(ctx, pgtest.Connect(t, url), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer part.Remote.Close()
	if len(part.Remote.partials) != 3 || part.Repos[0].Dir != part.Repos[1].Dir {
		t.Fatalf("%d partial files, directories %s and %s: want the three files shared", len(part.Remote.partials), part.Repos[0].Dir, part.Repos[1].Dir)
	}
	u := union(part)
	var wg sync.WaitGroup
	for range 4 {
		for _, q := range queries {
			wg.Go(func() {
				if got := search(u, q); got != want[q] {
					t.Errorf("%s: read in part, side by side:\n%s\nwhole:\n%s", q, got, want[q])
				}
			})
		}
	}
	wg.Wait()
	var fetched int64
	for _, p := range part.Remote.partials {
		for _, have := range p.have {
			if have {
				fetched += blocks.Size
			}
		}
		fetched -= p.size - p.tail // the tail's, fetched with the files
	}
	if n := part.Remote.Bytes(); n > fetched+2*blocks.Size {
		t.Errorf("the searches read %d bytes for %d bytes of blocks: blocks were read more than once", n, fetched)
	}
}

// A search that needs a block of a file a publish has since replaced, and
// the database dropped, fails saying so, rather than answering from what
// it has.
func TestFetchPartlyAfterTheFileIsGone(t *testing.T) {
	partlyFromAll(t)
	ctx := context.Background()
	url := pgtest.DB(t)
	publishedLarge(t, url)
	f, err := FetchPartly(ctx, pgtest.Connect(t, url), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Remote.Close()
	pgstoretest.Publish(t, url, "r", "b", testkb.Files{".kb/other.md": "# Other\n\nSomething else entirely.\n"})
	ix, err := query.Open(f.Repos[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	_, err = ix.Search(ctx, query.Request{Query: "rotate signing", N: 20})
	if err == nil || !strings.Contains(err.Error(), "is no longer in the database: a publish replaced it; search again") {
		t.Errorf("search said %v", err)
	}
	if err := f.Remote.Complete(ctx); err == nil || !strings.Contains(err.Error(), "no longer in the database") {
		t.Errorf("Complete said %v", err)
	}
}

// The document table stays in the database until something reads it: a
// search does not; listing the documents fetches it whole, checked, and
// it reads as the published one.
func TestFetchPartlyLeavesTheDocumentTable(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	dir := publishedLarge(t, url)
	f, err := FetchPartly(ctx, pgtest.Connect(t, url), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Remote.Close()
	var docs *partial
	for _, p := range f.Remote.partials {
		if query.ReadWhenNeeded(p.name) {
			docs = p
		}
	}
	if docs == nil {
		t.Fatal("the document table was fetched whole")
	}
	fetched := func() (n int) {
		docs.mu.Lock()
		defer docs.mu.Unlock()
		for _, have := range docs.have {
			if have {
				n++
			}
		}
		return n
	}
	ix, err := query.Open(f.Repos[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if resp, err := ix.Search(ctx, query.Request{Query: "rotate signing", N: 5}); err != nil || len(resp.Results) == 0 {
		t.Fatalf("search: %v", err)
	}
	if n := fetched(); n != 0 {
		t.Errorf("a search fetched %d blocks of the document table", n)
	}
	got, err := ix.Documents()
	if err != nil {
		t.Fatal(err)
	}
	if n := fetched(); n != len(docs.have) {
		t.Errorf("listing the documents fetched %d of the table's %d blocks", n, len(docs.have))
	}
	published, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer published.Close()
	want, err := published.Documents()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(got) < 400 || got[7].Path != want[7].Path || got[7].Title != want[7].Title {
		t.Errorf("%d documents read from the database, %d published", len(got), len(want))
	}
}
