// Command sameresults asks two kbq servers the same queries and says how
// far their top results agree: the queries of a BEIR split (those its
// judgments name), n results each, in one search mode.
//
//	sameresults -a http://127.0.0.1:7419 -b http://127.0.0.1:7420 \
//	    -queries queries.jsonl -qrels qrels/train.tsv -mode hybrid
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
)

type result struct {
	Path     string   `json:"path"`
	Score    float64  `json:"score"`
	Channels []string `json:"channels"`
}

func main() {
	a := flag.String("a", "", "one server's URL")
	b := flag.String("b", "", "the other's")
	queries := flag.String("queries", "", "BEIR queries.jsonl")
	qrels := flag.String("qrels", "", "BEIR judgments: the queries they name are asked")
	mode := flag.String("mode", "hybrid", "search mode")
	n := flag.Int("n", 10, "results a query")
	flag.Parse()
	if err := run(*a, *b, *queries, *qrels, *mode, *n); err != nil {
		fmt.Fprintln(os.Stderr, "sameresults:", err)
		os.Exit(1)
	}
}

func run(a, b, queriesFile, qrelsFile, mode string, n int) error {
	asked, err := judged(qrelsFile)
	if err != nil {
		return err
	}
	f, err := os.Open(queriesFile)
	if err != nil {
		return err
	}
	defer f.Close()
	var count, identical, overlap, semantic int
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(sc.Bytes(), &q); err != nil {
			return err
		}
		if !asked[q.ID] {
			continue
		}
		ra, err := search(a, q.Text, mode, n)
		if err != nil {
			return err
		}
		rb, err := search(b, q.Text, mode, n)
		if err != nil {
			return err
		}
		count++
		if slices.EqualFunc(ra, rb, func(x, y result) bool {
			return x.Path == y.Path && strconv.FormatFloat(x.Score, 'g', 12, 64) == strconv.FormatFloat(y.Score, 'g', 12, 64)
		}) {
			identical++
		}
		for _, x := range ra {
			if slices.ContainsFunc(rb, func(y result) bool { return y.Path == x.Path }) {
				overlap++
			}
			if slices.Contains(x.Channels, "semantic") {
				semantic++
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if count == 0 {
		return fmt.Errorf("no query of %s is judged in %s", queriesFile, qrelsFile)
	}
	fmt.Printf("%s: %d queries; top-%d overlap %.2f/%d on average; identical lists (paths, order, scores) %d/%d; results found by meaning %d\n",
		mode, count, n, float64(overlap)/float64(count), n, identical, count, semantic)
	return nil
}

// judged are the query ids a BEIR qrels file names.
func judged(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		if id, _, ok := strings.Cut(line, "\t"); ok && id != "query-id" {
			ids[id] = true
		}
	}
	return ids, nil
}

func search(base, q, mode string, n int) ([]result, error) {
	u := base + "/search?" + url.Values{"q": {q}, "mode": {mode}, "n": {strconv.Itoa(n)}}.Encode()
	resp, err := http.Get(u)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %s", u, resp.Status)
	}
	var r struct{ Results []result }
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, err
	}
	for i := range r.Results {
		// A server over the database names the repository too.
		if _, p, ok := strings.Cut(r.Results[i].Path, ":"); ok {
			r.Results[i].Path = p
		}
	}
	return r.Results, nil
}
