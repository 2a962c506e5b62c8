package query_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

func open(t testing.TB, files testkb.Files) *query.Index {
	t.Helper()
	ix, err := query.Open(testkb.Build(t, files))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ix.Close() })
	return ix
}

func search(t testing.TB, ix *query.Index, req query.Request) []string {
	t.Helper()
	resp, err := ix.Search(context.Background(), req)
	if err != nil {
		t.Fatalf("search %q: %v", req.Query, err)
	}
	var paths []string
	for _, r := range resp.Results {
		paths = append(paths, r.Path)
	}
	return paths
}

func TestIDF(t *testing.T) {
	// A term in 90% of 10,000 chunks must weigh little, one in 10 a lot.
	common, rare := query.IDF(9000, 10000), query.IDF(10, 10000)
	if math.Abs(common-0.10541) > 1e-4 || math.Abs(rare-6.8591) > 1e-4 {
		t.Errorf("idf(common) = %.5f, idf(rare) = %.5f; want 0.10541 and 6.8591", common, rare)
	}
}

func TestRareTermOutweighsCommon(t *testing.T) {
	files := testkb.Files{}
	for i := range 200 {
		files[fmt.Sprintf(".kb/n%03d.md", i)] = "the service handles requests\n"
	}
	files[".kb/common.md"] = "service service service handles requests\n"
	files[".kb/rare.md"] = "the zeppelin handles requests\n"
	ix := open(t, files)
	got := search(t, ix, query.Request{Query: "service zeppelin", N: 2})
	if len(got) == 0 || got[0] != ".kb/rare.md" {
		t.Errorf("results %v: the document with the rare term must come first", got)
	}
}

func TestQuerySyntax(t *testing.T) {
	ix := open(t, testkb.Files{
		".kb/a.md":              "---\ntags: [ops]\n---\nRetry the request with exponential backoff.\n",
		".kb/b.md":              "The backoff is exponential when you retry.\n",
		".kb/c.md":              "Deployment runbook: deploy with make.\n",
		".kb/memories/001-x.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nRetry deploys once.\n",
		".kb/title.md":          "---\ntitle: Retry policy\n---\nNothing else here.\n",
	})
	tests := []struct {
		query string
		want  []string // in order when ordered is set
	}{
		{`retry`, []string{".kb/a.md", ".kb/b.md", ".kb/memories/001-x.md", ".kb/title.md"}},
		{`+"exponential backoff"`, []string{".kb/a.md"}},
		{`+"backoff exponential"`, nil},
		{`+"backoff is exponential"`, []string{".kb/b.md"}},
		{`+"backoff the exponential"`, []string{".kb/b.md"}},
		{`"exponential backoff"`, []string{".kb/a.md", ".kb/b.md"}}, // a bare phrase requires nothing
		{`deploy AND "exponential backoff"`, nil},
		{`retry -exponential`, []string{".kb/memories/001-x.md", ".kb/title.md"}},
		{`retry NOT exponential`, []string{".kb/memories/001-x.md", ".kb/title.md"}},
		{`retry -"exponential backoff"`, []string{".kb/b.md", ".kb/memories/001-x.md", ".kb/title.md"}},
		{`+deploy retry`, []string{".kb/memories/001-x.md", ".kb/c.md"}},
		{`deploy AND retry`, []string{".kb/memories/001-x.md"}},
		{`runbook OR policy`, []string{".kb/c.md", ".kb/title.md"}},
		{`deploy*`, []string{".kb/c.md", ".kb/memories/001-x.md"}},
		{`back?ff`, []string{".kb/a.md", ".kb/b.md"}},
		{`re?ry`, nil}, // wildcards match index terms, and "retry" is indexed as "retri"
		{`retry kind:memory`, []string{".kb/memories/001-x.md"}},
		{`retry tag:OPS`, []string{".kb/a.md"}},
		{`tag:ops`, []string{".kb/a.md"}},
		{`title:retry`, []string{".kb/title.md", ".kb/memories/001-x.md"}}, // a memory's title is its first line
		{`retry path:.kb/memories/`, []string{".kb/memories/001-x.md"}},
		{`retry topic:memories`, []string{".kb/memories/001-x.md"}},
		{`topic:title`, []string{".kb/title.md"}},
		{`retry scope:project`, []string{".kb/a.md", ".kb/b.md", ".kb/memories/001-x.md", ".kb/title.md"}},
		{`the and of`, nil},
		{`* -retry`, []string{".kb/c.md"}},
		{`kind:topic -tag:ops`, []string{".kb/b.md", ".kb/c.md", ".kb/title.md"}},
		{`retry tag:ops OR kind:memory`, []string{".kb/a.md", ".kb/memories/001-x.md"}},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			got := search(t, ix, query.Request{Query: tt.query, N: 10})
			slices.Sort(got)
			want := slices.Clone(tt.want)
			slices.Sort(want)
			if strings.Join(got, " ") != strings.Join(want, " ") {
				t.Errorf("got %v, want %v", got, want)
			}
		})
	}
}

func TestArbitraryTextNeverFails(t *testing.T) {
	ix := open(t, testkb.Files{".kb/a.md": "C++ rules: a->b means (*a).b\n"})
	for _, q := range []string{
		`what's the C++ rule for a->b?`, `"unbalanced`, `-`, `+`, `AND AND`, `OR`, `NOT`, `***`, `?`, `*`,
		`tag:`, `:`, `title:""`, `kind:nonsense`, `🙂 emoji ✓`, strings.Repeat("word ", 2000), `\x00\xff`,
		`(a OR b) AND (c`, `path:../../etc`, `scope:`, `"" "" ""`,
	} {
		if _, err := ix.Search(context.Background(), query.Request{Query: q}); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
	got := search(t, ix, query.Request{Query: `what's the C++ rule for a->b?`})
	if len(got) != 1 {
		t.Errorf("pasted question found %v", got)
	}
}

// A bare phrase ranks the documents holding it first, and excludes none;
// +"phrase" requires it.
func TestBarePhraseRanks(t *testing.T) {
	ix := open(t, testkb.Files{
		// b holds the words more often, a holds them in order.
		".kb/a.md": "# Notes\n\nA Christian pleasure, they said.\n",
		".kb/b.md": "# Pleasure\n\nPleasure, pleasure and pleasure: a christian word, christian and christian again.\n",
		".kb/c.md": "# Other\n\nNothing of the kind.\n",
	})
	if got := search(t, ix, query.Request{Query: `christian pleasure`, N: 5}); len(got) != 2 || got[0] != ".kb/b.md" {
		t.Fatalf("bare words: %v, want b first (it holds them more often)", got)
	}
	if got := search(t, ix, query.Request{Query: `"christian pleasure"`, N: 5}); len(got) != 2 || got[0] != ".kb/a.md" {
		t.Errorf("bare phrase: %v, want a first, b still found", got)
	}
	if got := search(t, ix, query.Request{Query: `+"christian pleasure"`, N: 5}); len(got) != 1 || got[0] != ".kb/a.md" {
		t.Errorf("required phrase: %v, want a alone", got)
	}
	// A pasted paragraph holding a quotation still finds its document.
	q := `what did she mean by "a christian pleasure" in the letter she wrote`
	if got := search(t, ix, query.Request{Query: q, N: 5}); len(got) == 0 || got[0] != ".kb/a.md" {
		t.Errorf("pasted text with a quote: %v, want a first", got)
	}
}

func TestTiesBreakByPath(t *testing.T) {
	files := testkb.Files{}
	for _, name := range []string{"z", "b", "m", "a", "q"} {
		files[".kb/"+name+".md"] = "identical text about retries\n"
	}
	ix := open(t, files)
	got := search(t, ix, query.Request{Query: "retries", N: 3})
	if strings.Join(got, " ") != ".kb/a.md .kb/b.md .kb/m.md" {
		t.Errorf("got %v, want the first three paths in order", got)
	}
}

func TestCollapseAndChunks(t *testing.T) {
	long := "# Guide\n\n"
	for i := range 4 {
		long += fmt.Sprintf("## Part %d\n\n%s\n\n", i, strings.Repeat("retry the call now. ", 80))
	}
	ix := open(t, testkb.Files{".kb/guide.md": long, ".kb/other.md": "retry\n"})
	if got := search(t, ix, query.Request{Query: "retry"}); len(got) != 2 {
		t.Errorf("collapsed results %v, want one per document", got)
	}
	if got := search(t, ix, query.Request{Query: "retry", Chunks: true, N: 10}); len(got) != 5 {
		t.Errorf("chunk results %v, want 5", got)
	}
}

func TestTokenBudget(t *testing.T) {
	files := testkb.Files{}
	for i := range 5 {
		files[fmt.Sprintf(".kb/d%d.md", i)] = strings.Repeat(fmt.Sprintf("budget line %d with words\n", i), 40)
	}
	ix := open(t, files)
	resp, err := ix.Search(context.Background(), query.Request{Query: "budget", MaxTokens: 300})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range resp.Results {
		total += len(r.Content)
	}
	if !resp.Trimmed || total > 1200 || len(resp.Results) == 0 {
		t.Errorf("trimmed=%v, %d results, %d bytes of content for a 1200 byte budget", resp.Trimmed, len(resp.Results), total)
	}
}

func TestGetRebuildsDocuments(t *testing.T) {
	var long strings.Builder
	long.WriteString("---\ntitle: Long\n---\n# Long\n\n")
	for i := range 200 {
		fmt.Fprintf(&long, "Paragraph %d has some text in it, enough to make a section split.\n\n", i)
	}
	files := testkb.Files{
		".kb/long.md":  long.String(),
		".kb/crlf.md":  "\ufeff---\r\ntitle: W\r\n---\r\n# Windows\r\n\r\nLine.\r\n",
		".kb/empty.md": "---\ntitle: nothing\n---\n",
		"AGENTS.md":    "Be brief.",
	}
	ix := open(t, files)
	for path, want := range map[string]string{
		".kb/long.md":  long.String(),
		".kb/crlf.md":  "---\ntitle: W\n---\n# Windows\n\nLine.\n",
		".kb/empty.md": "---\ntitle: nothing\n---\n",
		"AGENTS.md":    "Be brief.",
	} {
		doc, err := documents.Get(context.Background(), ix, path, "")
		if err != nil {
			t.Fatalf("get %s: %v", path, err)
		}
		if doc.Content != want {
			t.Errorf("get %s:\n got %q\nwant %q", path, doc.Content, want)
		}
	}
}

func TestKeepGoingLeavesOutDuplicateIDs(t *testing.T) {
	dir := t.TempDir()
	files := testkb.Files{
		".kb/memories/001-a.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nalpha retries\n",
		".kb/memories/002-b.md": "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nbeta retries\n",
	}
	res, err := compiler.Build(context.Background(), files, compiler.BuildOptions{Out: dir, KeepGoing: true, BuiltAt: testkb.BuiltAt})
	if err != nil || res.Skipped != 1 {
		t.Fatalf("build: %v, %d skipped", err, res.Skipped)
	}
	ix, err := query.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if got := search(t, ix, query.Request{Query: "retries"}); strings.Join(got, " ") != ".kb/memories/001-a.md" {
		t.Errorf("got %v, want only the first memory", got)
	}
}

func TestBM25FSaturatesOnce(t *testing.T) {
	// A term in the title, a heading and the body of one chunk is one term:
	// its frequencies add up before saturation, so the chunk's score stays
	// below the term's idf however many fields hold it. Scoring each field
	// on its own and adding would exceed it.
	files := testkb.Files{
		".kb/zeppelin.md": "---\ntitle: Zeppelin\n---\n# Zeppelin\n\nThe zeppelin floats; a zeppelin is slow.\n",
	}
	for i := range 20 {
		files[fmt.Sprintf(".kb/n%02d.md", i)] = "---\ntitle: Note\n---\nThe service handles requests.\n"
	}
	ix := open(t, files)
	resp, err := ix.Search(context.Background(), query.Request{Query: "zeppelin", N: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 1 {
		t.Fatalf("got %d results, want 1", len(resp.Results))
	}
	idf := query.IDF(1, uint64(ix.Manifest.Counts.Chunks))
	if got := resp.Results[0].Score; got >= idf || got < idf/2 {
		t.Errorf("score %.4f, want in [idf/2, idf) = [%.4f, %.4f)", got, idf/2, idf)
	}
}

// A term repeated in the query counts as often as it is repeated, as
// separate clauses would, but its postings are read once: a pasted text
// that repeats a word thousands of times is answered like a short query.
func TestRepeatedTermsScoreAsClauses(t *testing.T) {
	files := testkb.Files{
		".kb/zeppelin.md": "The zeppelin floats over the hangar.\n",
		".kb/hangar.md":   "The hangar holds a blimp and a zeppelin.\n",
		".kb/other.md":    "Nothing to see here.\n",
	}
	ix := open(t, files)
	scores := func(q string) map[string]float64 {
		resp, err := ix.Search(context.Background(), query.Request{Query: q, N: 10})
		if err != nil {
			t.Fatal(err)
		}
		out := make(map[string]float64)
		for _, r := range resp.Results {
			out[r.Path] = r.Score
		}
		return out
	}
	one, both := scores("zeppelin"), scores("hangar")
	got := scores("zeppelin zeppelin Zeppelin hangar")
	for path := range got {
		want := 3*one[path] + both[path]
		if math.Abs(got[path]-want) > 1e-9*want {
			t.Errorf("%s: score %.6f, want 3×%.6f + %.6f = %.6f", path, got[path], one[path], both[path], want)
		}
	}
	if len(got) != 2 {
		t.Errorf("results %v, want the two documents holding the words", got)
	}
	long := strings.TrimSpace(strings.Repeat("zeppelin ", 5000))
	if s := scores(long)[".kb/zeppelin.md"]; math.Abs(s-5000*one[".kb/zeppelin.md"]) > 1e-6*s {
		t.Errorf("a term repeated 5000 times scores %.4f, want 5000 × %.6f", s, one[".kb/zeppelin.md"])
	}
}

// Blobs names each result's document's blob, whichever chunk matched: the
// blob is stored in the first chunk only.
func TestResultBlob(t *testing.T) {
	long := "# Guide\n\nIntro text.\n\n## Setup\n\n" + strings.Repeat("Install the tools and configure them. ", 120) +
		"\n\n## Zebra\n\nThe zebra section is last.\n"
	ix := open(t, testkb.Files{".kb/other.md": "# Other\n\nNothing here.\n", ".kb/guide.md": long})
	docs, err := ix.Documents()
	if err != nil {
		t.Fatal(err)
	}
	blobs := map[string]string{}
	for _, d := range docs {
		blobs[d.Path] = d.Blob
	}
	for _, q := range []string{"zebra", "intro", "nothing"} {
		resp, err := ix.Search(context.Background(), query.Request{Query: q, N: 1})
		if err != nil || len(resp.Results) != 1 {
			t.Fatalf("%s: %v %v", q, resp, err)
		}
		r := resp.Results[0]
		if got := ix.Blobs(resp.Results)[0]; got == "" || got != blobs[r.Path] {
			t.Errorf("%s: %s lines %v has blob %q, want %q", q, r.Path, r.Lines, got, blobs[r.Path])
		}
	}
	if resp, _ := ix.Search(context.Background(), query.Request{Query: "zebra", N: 1}); resp.Results[0].Lines[0] == 1 {
		t.Fatal("the zebra section is the document's first chunk: the test proves nothing")
	}
}

// A query that only excludes names nothing to find: an error, not every
// document with a score of 0.
func TestOnlyExclusionsIsAnError(t *testing.T) {
	ix := open(t, testkb.Files{".kb/a.md": "# A\n\nretry the deploy\n"})
	for _, q := range []string{"-retry", "NOT retry", "-retry -deploy", `-"the deploy"`, "-kind:memory"} {
		_, err := ix.Search(context.Background(), query.Request{Query: q})
		if !errors.Is(err, query.ErrNothingToFind) {
			t.Errorf("%q: %v, want ErrNothingToFind", q, err)
		}
	}
	for _, q := range []string{"* -retry", "kind:topic -retry", "deploy -retry"} {
		if _, err := ix.Search(context.Background(), query.Request{Query: q}); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
}

// description: in frontmatter says what a page is for (Hugo, mkdocs,
// SKILL.md files): its words are searched, and weigh more than the body's.
func TestDescriptionIsSearched(t *testing.T) {
	ix := open(t, testkb.Files{
		".kb/skills/pdf.md":  "---\ntitle: PDF skill\ndescription: Extract tables from invoices and receipts\n---\n# Usage\n\nRun the script on a file.\n",
		".kb/notes/other.md": "---\ntitle: Other\n---\n# Notes\n\nWe once talked about invoices in passing, among many other words here.\n",
	})
	got := search(t, ix, query.Request{Query: "receipts"})
	if len(got) != 1 || got[0] != ".kb/skills/pdf.md" {
		t.Errorf("a word only in the description: %v", got)
	}
	got = search(t, ix, query.Request{Query: "invoices", N: 2})
	if len(got) != 2 || got[0] != ".kb/skills/pdf.md" {
		t.Errorf("the description should outrank a passing mention in a body: %v", got)
	}
}

// What a search allocates does not follow an n beyond the chunks there
// are: kbq search -n 100000000 over a few documents.
func TestHugeNIsCapped(t *testing.T) {
	ix := open(t, testkb.Files{".kb/a.md": "# Deploy\n\nDeploy with make.\n", ".kb/b.md": "# Roll back\n\nRoll back a deploy.\n"})
	u, err := query.NewUnion([]query.Part{{Name: "a", Index: ix}})
	if err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]interface {
		Search(context.Context, query.Request) (*query.Response, error)
	}{"index": ix, "union": u} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		resp, err := s.Search(context.Background(), query.Request{Query: "deploy", N: 100_000_000})
		runtime.ReadMemStats(&after)
		if err != nil || len(resp.Results) != 2 {
			t.Fatalf("%s: %v, %v", name, resp, err)
		}
		if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
			t.Errorf("%s: a search for 100,000,000 results over 2 chunks allocated %d MB", name, grew>>20)
		}
	}
}
