package query

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"
)

// DefaultRecencyWeight is the share of a score the recency prior moves
// (Ranking.RecencyWeight): a document changed just now keeps its score,
// one changed a half-life ago loses half the weight's share, and one
// never dated or long unchanged loses all of it. docs/benchmarks.md has
// how it was chosen.
const DefaultRecencyWeight = 0.2

// recencyPool is how many results a search with the recency prior ranks
// before it re-ranks them by age and keeps n.
func recencyPool(n int) int { return 4*n + 20 }

// preferRecent scales each result's score by its document's recency, with
// the given half-life and weight, and sorts the results again. An
// uncommitted document is as new as can be.
func preferRecent(results []Result, halfLife time.Duration, weight float64, now time.Time) {
	for i := range results {
		r := &results[i]
		fresh := 0.0
		switch {
		case r.Uncommitted:
			fresh = 1
		case r.Updated != "":
			if at, err := time.Parse(time.RFC3339, r.Updated); err == nil {
				age := max(now.Sub(at), 0)
				fresh = math.Exp2(-float64(age) / float64(halfLife))
			}
		}
		r.Score *= 1 - weight + weight*fresh
	}
	slices.SortStableFunc(results, func(a, b Result) int { return cmp.Compare(b.Score, a.Score) })
}

// ParseHalfLife reads a recency half-life: a number of days, weeks,
// months (30 days) or years (365 days), as 90d, 12w, 6m or 1y.
func ParseHalfLife(s string) (time.Duration, error) {
	n, unit := len(s), byte(0)
	if n > 1 {
		unit = s[n-1]
	}
	days := map[byte]int{'d': 1, 'w': 7, 'm': 30, 'y': 365}[unit]
	k, err := strconv.Atoi(s[:max(n-1, 0)])
	if days == 0 || err != nil || k <= 0 || k > 100*365/days {
		return 0, fmt.Errorf("recency %q: want a half-life such as 90d, 12w, 6m or 1y", s)
	}
	return time.Duration(k*days) * 24 * time.Hour, nil
}
