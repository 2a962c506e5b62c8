package query_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/kbqdev/kbq/internal/testkb"
	"github.com/kbqdev/kbq/query"
)

// scifact reads the SciFact corpus as knowledge files, the training
// queries and their judgements; the test skips when ../shared is absent.
func scifact(t *testing.T) (files testkb.Files, queries map[string]string, relevant map[string][]string) {
	t.Helper()
	dir := filepath.Join("..", "..", "shared", "datasets", "scifact")
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		t.Skipf("SciFact is not here (%v)", err)
	}
	files = testkb.Files{}
	eachLine(t, filepath.Join(dir, "corpus.jsonl"), func(line string) {
		var d struct{ ID, Title, Text string }
		d.ID = jsonField(t, line, "_id")
		d.Title, d.Text = jsonField(t, line, "title"), jsonField(t, line, "text")
		title, _ := json.Marshal(d.Title)
		files[".kb/corpus/"+d.ID+".md"] = "---\ntitle: " + string(title) + "\n---\n" + d.Text + "\n"
	})
	relevant = map[string][]string{}
	eachLine(t, filepath.Join(dir, "qrels", "train.tsv"), func(line string) {
		f := strings.Split(line, "\t")
		if len(f) == 3 && f[0] != "query-id" && f[2] != "0" {
			relevant[f[0]] = append(relevant[f[0]], ".kb/corpus/"+f[1]+".md")
		}
	})
	queries = map[string]string{}
	eachLine(t, filepath.Join(dir, "queries.jsonl"), func(line string) {
		if id := jsonField(t, line, "_id"); relevant[id] != nil {
			queries[id] = jsonField(t, line, "text")
		}
	})
	return files, queries, relevant
}

func eachLine(t *testing.T, name string, fn func(string)) {
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		fn(sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

func jsonField(t *testing.T, line, key string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[key].(string)
	return s
}

// Pasted prose is not syntax: no SciFact training query loses a relevant
// document to operator parsing. Every relevant document that the query's
// words alone find in their top 100 (all punctuation made space) must be
// in the top 100 of the query as typed.
func TestSciFactQueriesKeepTheirAnswers(t *testing.T) {
	files, queries, relevant := scifact(t)
	ix := open(t, files)
	matches := func(q string) map[string]bool {
		resp, err := ix.Search(context.Background(), query.Request{Query: q, N: 100, MaxTokens: 1 << 30, Mode: query.ModeLexical})
		if err != nil {
			t.Fatalf("search %q: %v", q, err)
		}
		got := map[string]bool{}
		for _, r := range resp.Results {
			got[r.Path] = true
		}
		return got
	}
	lost, checked := 0, 0
	for id, q := range queries {
		if !strings.ContainsAny(q, `+-"*?:`) && !strings.Contains(q, "AND") && !strings.Contains(q, "OR") && !strings.Contains(q, "NOT") {
			continue // nothing in it could be read as syntax
		}
		checked++
		words := strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return ' '
		}, q)
		plain, typed := matches(words), matches(q)
		for _, p := range relevant[id] {
			if plain[p] && !typed[p] {
				lost++
				t.Errorf("query %s %q loses %s, which its words match", id, q, p)
			}
		}
	}
	if len(queries) < 500 {
		t.Fatalf("read %d training queries", len(queries))
	}
	t.Logf("%d training queries, %d with characters of the syntax, %d relevant documents lost from the top 100", len(queries), checked, lost)
}
