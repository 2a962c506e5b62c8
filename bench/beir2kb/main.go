// Command beir2kb turns a BEIR corpus (corpus.jsonl: _id, title, text)
// into a knowledge directory: one markdown file per document, named by its
// id, with the title in the frontmatter and the text as the body.
//
//	go run ./bench/beir2kb corpus.jsonl repo/.kb/corpus
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: beir2kb corpus.jsonl DIR")
		os.Exit(2)
	}
	if err := convert(os.Args[1], os.Args[2]); err != nil {
		fmt.Fprintln(os.Stderr, "beir2kb:", err)
		os.Exit(1)
	}
}

func convert(corpus, dir string) error {
	f, err := os.Open(corpus)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	n := 0
	for sc.Scan() {
		var doc struct {
			ID    string `json:"_id"`
			Title string `json:"title"`
			Text  string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &doc); err != nil {
			return fmt.Errorf("line %d: %w", n+1, err)
		}
		if doc.ID == "" || strings.ContainsAny(doc.ID, `/\`) || strings.HasPrefix(doc.ID, ".") {
			return fmt.Errorf("line %d: unusable id %q", n+1, doc.ID)
		}
		// A JSON string is a valid YAML double-quoted scalar.
		title, _ := json.Marshal(doc.Title)
		body := fmt.Sprintf("---\ntitle: %s\n---\n%s\n", title, doc.Text)
		if err := os.WriteFile(filepath.Join(dir, doc.ID+".md"), []byte(body), 0o644); err != nil {
			return err
		}
		n++
	}
	if err := sc.Err(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "beir2kb: %d documents\n", n)
	return nil
}
