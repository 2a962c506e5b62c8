package testkb

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/internal/testreq"
)

// SciFact reads the SciFact dataset in dir as knowledge files, with the
// training queries and their judgements (relevant paths by query id); the
// test skips when dir is absent.
func SciFact(t testing.TB, dir string) (files Files, queries map[string]string, relevant map[string][]string) {
	t.Helper()
	if _, err := os.Stat(filepath.Join(dir, "corpus.jsonl")); err != nil {
		testreq.Skipf(t, testreq.SciFact, "SciFact is not here (%v)", err)
	}
	files = Files{}
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

func eachLine(t testing.TB, name string, fn func(string)) {
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

func jsonField(t testing.TB, line, key string) string {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatal(err)
	}
	s, _ := m[key].(string)
	return s
}
