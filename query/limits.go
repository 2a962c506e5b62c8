package query

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/bits-and-blooms/bitset"
	"github.com/kbqdev/kbq/query/syntax"
)

// What one query may cost. A query of any length is accepted, and its
// cost is bounded: identical clauses are merged, and past these limits
// clauses, terms and expansions are left out, and the response's notes
// say what was dropped. (Variables, so that tests can lower them.)
var (
	// maxClauses bounds the clauses other than optional words (prefixes,
	// wildcards, phrases, filters, required and excluded words, OR
	// groups' members), after identical ones are merged.
	maxClauses = 256
	// maxTerms bounds the distinct words a query searches for.
	maxTerms = 1024
	// maxExpandedTerms bounds the terms all of a query's prefixes and
	// wildcards expand to together (each one maxExpansion at most).
	maxExpandedTerms = 256
	// maxExpandedPostings bounds the postings of the terms all of a
	// query's expansions search (the sum of their document frequencies):
	// a term's cost is the chunks that hold it.
	maxExpandedPostings = 3_000_000
	// maxScannedTotal bounds the dictionary entries all of a query's
	// expansions read together.
	maxScannedTotal = 1 << 18
)

// bound merges a parsed query's identical clauses and leaves out those
// past maxClauses, saying so in notes. Optional words are kept as they
// are: a repeated word counts as often as it is written (collapseRepeats
// reads it once), and maxTerms bounds them once analyzed.
func bound(p syntax.Parsed) (syntax.Parsed, []string) {
	seen := make(map[string]bool)
	var out []syntax.Clause
	n, dropped := 0, 0
	for _, c := range p.Clauses {
		if c.Occur == syntax.Should && c.Kind == syntax.Word {
			out = append(out, c)
			continue
		}
		key := clauseKey(c)
		if seen[key] {
			continue
		}
		seen[key] = true
		size := 1 + len(c.Sub)
		if n+size > maxClauses {
			dropped++
			continue
		}
		n += size
		out = append(out, c)
	}
	var notes []string
	if dropped > 0 {
		notes = append(notes, fmt.Sprintf("the query has more than %d clauses: %d were left out; shorten it", maxClauses, dropped))
	}
	return syntax.Parsed{Clauses: out}, notes
}

// clauseKey identifies a clause: two with the same key match the same.
func clauseKey(c syntax.Clause) string {
	var b strings.Builder
	writeClauseKey(&b, c)
	return b.String()
}

func writeClauseKey(b *strings.Builder, c syntax.Clause) {
	b.WriteString(strconv.Itoa(int(c.Occur)))
	b.WriteByte(' ')
	b.WriteString(strconv.Itoa(int(c.Kind)))
	b.WriteByte(' ')
	b.WriteString(strconv.Quote(c.Field))
	b.WriteString(strconv.Quote(c.Text))
	if len(c.Sub) > 0 {
		b.WriteByte('(')
		for _, s := range c.Sub {
			writeClauseKey(b, s)
			b.WriteByte(',')
		}
		b.WriteByte(')')
	}
}

// budget is what an evaluation has spent of the query's limits, and its
// context: a search whose context ends stops between clauses.
type budget struct {
	ctx        context.Context
	expanded   int                 // terms expansions produced
	expandedDF int                 // the chunks holding them, summed over the terms
	scanned    int                 // dictionary entries expansions read
	memo       map[string][]string // expansions made, by pattern and fields
	free       []*bitset.BitSet    // sets done with, for bits to reuse
}

// bits returns an empty set of the index's chunks, reusing one done with:
// a query of many clauses allocates about as many sets as it nests deep,
// not as many as it has clauses.
func (ev *eval) bits() *bitset.BitSet {
	if n := len(ev.free); n > 0 {
		b := ev.free[n-1]
		ev.free = ev.free[:n-1]
		b.ClearAll()
		return b
	}
	return bitset.New(uint(ev.e.maxDoc))
}

// liveSet returns a set of every live chunk.
func (ev *eval) liveSet() *bitset.BitSet {
	b := ev.bits()
	ev.e.live.CopyFull(b)
	return b
}

// recycle hands back a set that nothing refers to any more.
func (ev *eval) recycle(b *bitset.BitSet) {
	if b != nil && len(ev.free) < 16 {
		ev.free = append(ev.free, b)
	}
}

// cancelled returns the context's error once it has ended.
func (b *budget) cancelled() error {
	if b.ctx == nil {
		return nil
	}
	if err := b.ctx.Err(); err != nil {
		return fmt.Errorf("search stopped: %w", err)
	}
	return nil
}
