// Command quantcmp measures what storing vectors in fewer bits costs in
// retrieval quality: it embeds a BEIR corpus and its judged queries with a
// model, ranks the documents for each query by their vectors as float32,
// as half floats and as int8 with a scale per vector (kbq's artifact), and
// prints nDCG@10 and recall@100 for each.
//
//	go run ./bench/quantcmp -model DIR -beir ../shared/datasets/scifact [-split train] [-cache FILE]
//
// Documents are embedded as kbc embeds a chunk, title and text on two
// lines; the vectors are kept in -cache, so that a second run only ranks.
package main

import (
	"bufio"
	"context"
	"encoding/gob"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/embedding"
)

func main() {
	model := flag.String("model", "", "the model's directory")
	beir := flag.String("beir", "", "a BEIR dataset's directory: corpus.jsonl, queries.jsonl, qrels/")
	split := flag.String("split", "train", "the qrels split")
	cache := flag.String("cache", "", "a file keeping the vectors between runs")
	flag.Parse()
	if *model == "" || *beir == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*model, *beir, *split, *cache); err != nil {
		fmt.Fprintln(os.Stderr, "quantcmp:", err)
		os.Exit(1)
	}
}

type vectors struct {
	DocIDs, QueryIDs []string
	Docs, Queries    [][]float32
}

func run(model, beir, split, cache string) error {
	qrels, err := readQrels(filepath.Join(beir, "qrels", split+".tsv"))
	if err != nil {
		return err
	}
	var v vectors
	if cache != "" {
		if f, err := os.Open(cache); err == nil {
			err = gob.NewDecoder(f).Decode(&v)
			f.Close()
			if err != nil {
				return fmt.Errorf("%s: %w", cache, err)
			}
		}
	}
	if v.Docs == nil {
		if v, err = embed(model, beir, qrels); err != nil {
			return err
		}
		if cache != "" {
			f, err := os.Create(cache)
			if err != nil {
				return err
			}
			if err := gob.NewEncoder(f).Encode(v); err != nil {
				return err
			}
			if err := f.Close(); err != nil {
				return err
			}
		}
	}
	fmt.Printf("%d documents, %d judged queries (%s)\n\n", len(v.Docs), len(v.Queries), split)
	fmt.Println("| vectors | bytes each | nDCG@10 | recall@100 |")
	fmt.Println("|---|---|---|---|")
	dims := len(v.Docs[0])
	for _, r := range []struct {
		name  string
		bytes int
		store func([]float32) []float32
	}{
		{"float32", 4 * dims, func(x []float32) []float32 { return x }},
		{"float16", 2 * dims, half},
		{"int8, a scale per vector", 4 + dims, int8Scaled},
	} {
		docs := make([][]float32, len(v.Docs))
		for i, d := range v.Docs {
			docs[i] = r.store(d)
		}
		ndcg, recall := evaluate(v, docs, qrels, nil)
		fmt.Printf("| %s | %d | %.4f | %.4f |\n", r.name, r.bytes, ndcg, recall)
	}

	// Sign bits, centred on the corpus's mean or not, choose candidates
	// by Hamming distance, which int8 vectors then rank.
	int8Docs := make([][]float32, len(v.Docs))
	for i, d := range v.Docs {
		int8Docs[i] = int8Scaled(d)
	}
	mean := make([]float32, dims)
	for _, d := range v.Docs {
		for j, x := range d {
			mean[j] += x / float32(len(v.Docs))
		}
	}
	for _, centred := range []bool{false, true} {
		centre := make([]float32, dims)
		name := "sign bits"
		if centred {
			centre, name = mean, "sign bits about the mean"
		}
		docBits := make([][]uint64, len(v.Docs))
		for i, d := range v.Docs {
			docBits[i] = signBits(d, centre)
		}
		for _, r := range []int{100, 200, 500, 1000, 2000} {
			pick := func(q []float32) []int { return nearestBits(signBits(q, centre), docBits, r) }
			ndcg, recall := evaluate(v, int8Docs, qrels, pick)
			fmt.Printf("| %s, %d candidates, int8 rescored | %d + %d | %.4f | %.4f |\n", name, r, dims/8, 4+dims, ndcg, recall)
		}
	}
	return nil
}

func signBits(x, centre []float32) []uint64 {
	bits := make([]uint64, (len(x)+63)/64)
	for i, f := range x {
		if f > centre[i] {
			bits[i/64] |= 1 << (i % 64)
		}
	}
	return bits
}

// nearestBits returns the r documents nearest q in Hamming distance.
func nearestBits(q []uint64, docs [][]uint64, r int) []int {
	type near struct{ doc, dist int }
	all := make([]near, len(docs))
	for i, d := range docs {
		dist := 0
		for j := range d {
			dist += bits.OnesCount64(d[j] ^ q[j])
		}
		all[i] = near{i, dist}
	}
	slices.SortStableFunc(all, func(a, b near) int { return a.dist - b.dist })
	out := make([]int, 0, r)
	for _, n := range all[:min(r, len(all))] {
		out = append(out, n.doc)
	}
	return out
}

// embed embeds the corpus and the judged queries.
func embed(model, beir string, qrels map[string]map[string]int) (vectors, error) {
	e, err := embedding.Load(model)
	if err != nil {
		return vectors{}, err
	}
	defer e.Close()
	var v vectors
	var texts []string
	err = readJSONL(filepath.Join(beir, "corpus.jsonl"), func(rec map[string]any) {
		v.DocIDs = append(v.DocIDs, fmt.Sprint(rec["_id"]))
		texts = append(texts, fmt.Sprint(rec["title"])+"\n"+fmt.Sprint(rec["text"]))
	})
	if err != nil {
		return v, err
	}
	var queries []string
	err = readJSONL(filepath.Join(beir, "queries.jsonl"), func(rec map[string]any) {
		id := fmt.Sprint(rec["_id"])
		if _, judged := qrels[id]; judged {
			v.QueryIDs = append(v.QueryIDs, id)
			queries = append(queries, fmt.Sprint(rec["text"]))
		}
	})
	if err != nil {
		return v, err
	}
	ctx := context.Background()
	for start := 0; start < len(texts); start += 64 {
		batch, err := e.Embed(ctx, texts[start:min(start+64, len(texts))])
		if err != nil {
			return v, err
		}
		v.Docs = append(v.Docs, batch...)
		fmt.Fprintf(os.Stderr, "\rembedded %d/%d", len(v.Docs), len(texts))
	}
	fmt.Fprintln(os.Stderr)
	if v.Queries, err = e.Embed(ctx, queries); err != nil {
		return v, err
	}
	return v, nil
}

// half rounds every value to the nearest half float.
func half(x []float32) []float32 {
	out := make([]float32, len(x))
	for i, f := range x {
		out[i] = halfRound(f)
	}
	return out
}

// halfRound rounds f to the nearest float16 value (ties to even), within
// the normal range the unit vectors of a model keep to.
func halfRound(f float32) float32 {
	if f == 0 {
		return 0
	}
	exp := math.Floor(math.Log2(math.Abs(float64(f))))
	exp = max(exp, -14) // subnormal halves share the smallest exponent
	ulp := math.Ldexp(1, int(exp)-10)
	return float32(math.RoundToEven(float64(f)/ulp) * ulp)
}

// int8Scaled is x as the artifact stores it, read back.
func int8Scaled(x []float32) []float32 {
	return artifact.Dequantize(nil, artifact.Quantize(nil, x))
}

// evaluate ranks docs for every query by inner product, of those pick
// chooses when it is set, and returns the mean nDCG@10 and recall@100, as
// trec_eval defines them.
func evaluate(v vectors, docs [][]float32, qrels map[string]map[string]int, pick func([]float32) []int) (ndcg, recall float64) {
	type hit struct {
		doc   int
		score float32
	}
	for qi, q := range v.Queries {
		candidates := make([]int, len(docs))
		for i := range candidates {
			candidates[i] = i
		}
		if pick != nil {
			candidates = pick(q)
		}
		hits := make([]hit, len(candidates))
		for i, c := range candidates {
			var s float32
			for j, x := range docs[c] {
				s += q[j] * x
			}
			hits[i] = hit{c, s}
		}
		slices.SortFunc(hits, func(a, b hit) int {
			if a.score != b.score {
				if a.score > b.score {
					return -1
				}
				return 1
			}
			return strings.Compare(v.DocIDs[a.doc], v.DocIDs[b.doc])
		})
		judged := qrels[v.QueryIDs[qi]]
		var dcg, ideal float64
		var gains []int
		relevant, found := 0, 0
		for _, g := range judged {
			if g > 0 {
				gains = append(gains, g)
				relevant++
			}
		}
		slices.SortFunc(gains, func(a, b int) int { return b - a })
		for i, g := range gains[:min(10, len(gains))] {
			ideal += float64(g) / math.Log2(float64(i+2))
		}
		for i, h := range hits[:min(100, len(hits))] {
			g := judged[v.DocIDs[h.doc]]
			if g <= 0 {
				continue
			}
			found++
			if i < 10 {
				dcg += float64(g) / math.Log2(float64(i+2))
			}
		}
		if ideal > 0 {
			ndcg += dcg / ideal
		}
		if relevant > 0 {
			recall += float64(found) / float64(relevant)
		}
	}
	n := float64(len(v.Queries))
	return ndcg / n, recall / n
}

func readQrels(path string) (map[string]map[string]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	qrels := map[string]map[string]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) != 3 {
			continue
		}
		g, err := strconv.Atoi(fields[2])
		if err != nil {
			continue // the header
		}
		if qrels[fields[0]] == nil {
			qrels[fields[0]] = map[string]int{}
		}
		qrels[fields[0]][fields[1]] = g
	}
	return qrels, sc.Err()
}

func readJSONL(path string, each func(map[string]any)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		each(rec)
	}
	return sc.Err()
}
