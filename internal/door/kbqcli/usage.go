package kbqcli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/knowledge"
	"github.com/kbqdev/kbq/query"
)

// UsageStats is what the usage log says of an artifact's documents.
type UsageStats struct {
	Log       string     `json:"log"`
	Recording bool       `json:"recording"`
	Since     *time.Time `json:"since,omitempty"` // the earliest record
	Uses      int        `json:"uses"`
	Used      int        `json:"used"`       // documents used at least once
	NeverUsed int        `json:"never_used"` // documents never used
	Most      []DocUse   `json:"most_used"`
	Least     []DocUse   `json:"least_used"` // of those used at least once
	// Never lists documents never used, in path order, up to ten.
	Never []string `json:"never_used_paths"`
	// Error says why the log could not be read; the rest is then empty.
	Error string `json:"error,omitempty"`
}

// DocUse is one document's use.
type DocUse struct {
	Path   string    `json:"path"`
	Uses   int       `json:"uses"`
	Recent int       `json:"recent"` // within the last 30 days
	Last   time.Time `json:"last"`
}

// ReadUsageStats summarises the usage log of the artifact ix for its
// documents; n bounds each list.
func ReadUsageStats(s *cli.Streams, ix *query.Index, n int) (*UsageStats, error) {
	sum, path, err := usage.ReadFile(ix.Dir, s.Getenv)
	if err != nil {
		return nil, err
	}
	docs, err := ix.Documents()
	if err != nil {
		return nil, err
	}
	log, _ := usage.Open(ix.Dir, s.Getenv)
	st := &UsageStats{Log: path, Recording: log != nil, Most: []DocUse{}, Least: []DocUse{}, Never: []string{}}
	if !sum.Since.IsZero() {
		st.Since = &sum.Since
	}
	var used []DocUse
	for _, d := range docs {
		if d.Kind == knowledge.KindContext {
			continue // always loaded, never searched for
		}
		u := sum.Docs[d.Path]
		if u == nil || u.Count == 0 {
			st.NeverUsed++
			if len(st.Never) < 10 {
				st.Never = append(st.Never, d.Path)
			}
			continue
		}
		used = append(used, DocUse{Path: d.Path, Uses: u.Count, Recent: u.Recent, Last: u.Last})
		st.Uses += u.Count
	}
	st.Used = len(used)
	slices.SortFunc(used, func(a, b DocUse) int {
		return cmp.Or(cmp.Compare(b.Uses, a.Uses), b.Last.Compare(a.Last), cmp.Compare(a.Path, b.Path))
	})
	st.Most = append(st.Most, used[:min(n, len(used))]...)
	for i := len(used) - 1; i >= 0 && len(st.Least) < n && i >= n; i-- {
		st.Least = append(st.Least, used[i])
	}
	return st, nil
}

func writeUsageStats(w io.Writer, u *UsageStats, now time.Time) {
	switch {
	case u.Error != "":
		fmt.Fprintf(w, "usage\tthe log cannot be read\n")
		return
	case u.Since == nil && !u.Recording:
		fmt.Fprintf(w, "usage\tnot recorded (KBQ_USAGE=off, or CI)\n")
		return
	case u.Since == nil:
		fmt.Fprintf(w, "usage\tnothing recorded yet (%s)\n", u.Log)
		return
	}
	fmt.Fprintf(w, "usage\t%d %s of %d %s since %s (%s)\n", u.Uses, plural(u.Uses, "use", "uses"),
		u.Used, plural(u.Used, "document", "documents"), u.Since.Local().Format("2006-01-02"), u.Log)
	list := func(label string, docs []DocUse) {
		for i, d := range docs {
			if i > 0 {
				label = ""
			}
			fmt.Fprintf(w, "  %s\t%s  %d (%d in 30 days, last %s)\n", label, visible.Line(d.Path), d.Uses, d.Recent, ago(now.Sub(d.Last)))
		}
	}
	list("most used", u.Most)
	list("least used", u.Least)
	if u.NeverUsed > 0 {
		more := ""
		if u.NeverUsed > len(u.Never) {
			more = ", …"
		}
		fmt.Fprintf(w, "  never used\t%d %s: %s%s\n", u.NeverUsed, plural(u.NeverUsed, "document", "documents"), visible.Line(strings.Join(u.Never, ", ")), more)
	}
}

// ago says how long ago in the largest unit that reads well: "3 days ago".
func ago(d time.Duration) string {
	const day = 24 * time.Hour
	switch {
	case d < 0:
		return "in the future"
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return agoUnit(int(d/time.Minute), "minute")
	case d < 48*time.Hour:
		return agoUnit(int(d/time.Hour), "hour")
	case d < 60*day:
		return agoUnit(int(d/day), "day")
	case d < 730*day:
		return agoUnit(int(d/(30*day)), "month")
	}
	return agoUnit(int(d/(365*day)), "year")
}

func agoUnit(n int, unit string) string {
	if n == 1 {
		return "1 " + unit + " ago"
	}
	return fmt.Sprintf("%d %ss ago", n, unit)
}
