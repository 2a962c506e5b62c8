package checks

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"slices"
	"strings"
	"unicode"

	"github.com/kbqdev/kbq/knowledge"
)

// DefaultDuplicateThreshold is the share of word triples two documents
// must have in common for kbc check to call one a near duplicate of the
// other.
const DefaultDuplicateThreshold = 0.8

// A text is compared by its shingles: the hashes of its word triples
// (lowercased, punctuation dropped), a set held sorted.
type shingleSet []uint64

// minShingles is the fewest shingles a text needs to be compared: a
// memory of a line or two says too little to be a duplicate.
const minShingles = 8

var shingleSeed = maphash.MakeSeed()

// shingles returns the word-triple set of text.
func shingles(text string) shingleSet {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) < 3 {
		return nil
	}
	set := make(shingleSet, 0, len(words)-2)
	var h maphash.Hash
	h.SetSeed(shingleSeed)
	for i := 0; i+3 <= len(words); i++ {
		h.Reset()
		h.WriteString(words[i])
		h.WriteByte(0)
		h.WriteString(words[i+1])
		h.WriteByte(0)
		h.WriteString(words[i+2])
		set = append(set, h.Sum64())
	}
	slices.Sort(set)
	return slices.Compact(set)
}

// TextSet is what a text is compared by: its word triples or, for a text
// too short to have minShingles of them (a one-line memory), the letter
// triples of its words in order: "deploys happen on tuesdays" and "deploys
// happen on tuesday" share 22 of 23, where their words share 3 of 5.
// Short texts are compared with short texts only.
func TextSet(text string) (set shingleSet, short bool) {
	if set = shingles(text); len(set) >= minShingles {
		return set, false
	}
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	if len(words) < minWords {
		return nil, true
	}
	norm := []rune(" " + strings.Join(words, " ") + " ")
	set = make(shingleSet, 0, len(norm))
	for i := 0; i+3 <= len(norm); i++ {
		set = append(set, maphash.String(shingleSeed, string(norm[i:i+3])))
	}
	slices.Sort(set)
	return slices.Compact(set), true
}

// minWords is the fewest words a short text needs to be compared.
const minWords = 2

// jaccard is |a ∩ b| / |a ∪ b| of two sorted sets.
func jaccard(a, b shingleSet) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	common := 0
	for i, j := 0, 0; i < len(a) && j < len(b); {
		switch {
		case a[i] == b[j]:
			common++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(common) / float64(len(a)+len(b)-common)
}

// MinHash with locality-sensitive hashing finds the pairs worth comparing
// among many documents without comparing all pairs: documents whose
// signatures agree on all rows of some band are candidates, and each
// candidate pair is then compared exactly. With 16 bands of 4 rows a pair
// sharing 70% of its shingles is a candidate with probability 0.99.
const (
	bands   = 16
	rows    = 4
	hashers = bands * rows
)

func signature(s shingleSet) [hashers]uint64 {
	var sig [hashers]uint64
	for i := range sig {
		sig[i] = ^uint64(0)
	}
	for _, x := range s {
		for i := range sig {
			// A cheap independent permutation per row: xor a constant,
			// then a 64-bit mix (splitmix64's finalizer).
			v := x ^ (uint64(i+1) * 0x9e3779b97f4a7c15)
			v = (v ^ v>>30) * 0xbf58476d1ce4e5b9
			v = (v ^ v>>27) * 0x94d049bb133111eb
			v ^= v >> 31
			sig[i] = min(sig[i], v)
		}
	}
	return sig
}

// Similar is a document a check did not read that may duplicate one it
// did: what compiler.CheckOptions.Similar finds, in the artifact for
// instance.
type Similar struct {
	Path string
	Line int    // where its body starts
	Body string // its text without frontmatter
}

// A DupDoc is a document as the duplicate check sees it.
type DupDoc struct {
	Path, Display, Scope string
	Line                 int // where its body starts
	Set                  shingleSet
	Short                bool   // Set holds letter triples, not word triples
	Checked              bool   // reported on; others are only compared with
	Body                 string // of a checked document, to find similar ones
}

// DupKind reports whether documents of kind are compared for duplicates.
func DupKind(kind string) bool { return kind == knowledge.KindMemory || kind == knowledge.KindTopic }

// candidatePairs calls compare with the pairs of members whose MinHash
// signatures agree in some band: the candidates among many documents.
func candidatePairs(docs []DupDoc, members []int, compare func(i, j int)) {
	sigs := make([][hashers]uint64, len(members))
	for k, i := range members {
		sigs[k] = signature(docs[i].Set)
	}
	seen := make(map[[2]int]bool)
	for band := range bands {
		buckets := make(map[[rows]uint64][]int)
		for k := range members {
			var key [rows]uint64
			copy(key[:], sigs[k][band*rows:(band+1)*rows])
			buckets[key] = append(buckets[key], k)
		}
		for _, bucket := range buckets {
			for x := range bucket {
				for y := x + 1; y < len(bucket); y++ {
					pair := [2]int{members[bucket[x]], members[bucket[y]]}
					if !seen[pair] {
						seen[pair] = true
						compare(pair[0], pair[1])
					}
				}
			}
		}
	}
}

// Duplicates reports, for each checked document, the documents of its
// scope that share at least threshold of its word triples, the most
// similar first, three at most. Of a pair both checked, the later path is
// reported.
func Duplicates(docs []DupDoc, threshold float64) Diagnostics {
	// Long texts are compared by word triples, short ones by words, each
	// with its own kind in its scope.
	byScope := make(map[string][]int)
	for i, d := range docs {
		switch {
		case !d.Short && len(d.Set) >= minShingles:
			byScope[d.Scope] = append(byScope[d.Scope], i)
		case d.Short && len(d.Set) > 0:
			byScope[d.Scope+"\x00short"] = append(byScope[d.Scope+"\x00short"], i)
		}
	}
	type match struct {
		other int
		sim   float64
	}
	found := make(map[int][]match)
	compare := func(i, j int) {
		a, b := &docs[i], &docs[j]
		if !a.Checked && !b.Checked {
			return
		}
		sim := jaccard(a.Set, b.Set)
		if sim < threshold {
			return
		}
		// Report on the later path when both are checked, so that a pair
		// is reported once.
		if b.Checked && (!a.Checked || b.Path > a.Path) {
			found[j] = append(found[j], match{i, sim})
		} else {
			found[i] = append(found[i], match{j, sim})
		}
	}
	for _, members := range byScope {
		if len(members) <= 64 {
			for x := range members {
				for y := x + 1; y < len(members); y++ {
					compare(members[x], members[y])
				}
			}
			continue
		}
		candidatePairs(docs, members, compare)
	}
	var diags Diagnostics
	for i, ms := range found {
		slices.SortFunc(ms, func(a, b match) int {
			return cmp.Or(cmp.Compare(b.sim, a.sim), cmp.Compare(docs[a.other].Path, docs[b.other].Path))
		})
		d := docs[i]
		unit := "word triples"
		if d.Short {
			unit = "letter triples"
		}
		for _, m := range ms[:min(len(ms), 3)] {
			o := docs[m.other]
			diags = append(diags, Diagnostic{Path: d.Display, Line: d.Line, Col: 1, Severity: Warning,
				Message: fmt.Sprintf("nearly duplicates %s:%d (%.0f%% of their %s in common): merge them, or remove one",
					o.Display, o.Line, 100*m.sim, unit)})
		}
	}
	return diags
}

// AddSimilar adds to dups the documents similar finds for the checked
// ones, unless read already.
func AddSimilar(dups []DupDoc, similar func(scope, path, body string) ([]Similar, error)) ([]DupDoc, error) {
	have := make(map[string]bool, len(dups))
	for _, d := range dups {
		have[d.Path] = true
	}
	for _, d := range slices.Clone(dups) {
		if !d.Checked {
			continue
		}
		found, err := similar(d.Scope, d.Path, d.Body)
		if err != nil {
			return nil, err
		}
		for _, s := range found {
			if !have[s.Path] {
				have[s.Path] = true
				set, short := TextSet(s.Body)
				dups = append(dups, DupDoc{Path: s.Path, Display: s.Path, Scope: d.Scope, Line: s.Line, Set: set, Short: short})
			}
		}
	}
	return dups, nil
}
