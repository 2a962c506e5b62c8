package query

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/knowledge"
)

// markDisputes marks the results in an unresolved dispute (a document's
// contradicts:, neither side superseded): each names those it is in
// dispute with (Result.Disputed), a note says so, and of two disputing
// results the newer comes first.
func (ix *Index) markDisputes(resp *Response) {
	disputed := ix.Manifest.Disputed
	if len(disputed) == 0 {
		return
	}
	var noted []string
	for i := range resp.Results {
		r := &resp.Results[i]
		if others := disputed[r.Path]; len(others) > 0 {
			r.Disputed = others
			noted = append(noted, r.Path)
		}
	}
	if len(noted) == 0 {
		return
	}
	dated := ix.documentDates(noted)
	// The newer of two disputing results moves up to the older's place.
	for i := 0; i < len(resp.Results); i++ {
		for j := i + 1; j < len(resp.Results); j++ {
			a, b := resp.Results[i], resp.Results[j]
			if slices.Contains(a.Disputed, b.Path) && dated[b.Path] > dated[a.Path] {
				copy(resp.Results[i+1:j+1], resp.Results[i:j])
				resp.Results[i] = b
			}
		}
	}
	for _, r := range resp.Results {
		if len(r.Disputed) > 0 {
			note := fmt.Sprintf("%s is disputed by %s: both are shown, the newer first; supersede the one that is wrong", r.Path, strings.Join(r.Disputed, ", "))
			if !slices.Contains(resp.Notes, note) && !disputedNoted(resp.Notes, r) {
				resp.Notes = append(resp.Notes, note)
			}
		}
	}
}

// disputedNoted reports whether a note already names r's dispute from the
// other side.
func disputedNoted(notes []string, r Result) bool {
	for _, n := range notes {
		for _, o := range r.Disputed {
			if strings.HasPrefix(n, o+" is disputed by ") && strings.Contains(n, r.Path) {
				return true
			}
		}
	}
	return false
}

// documentDates is when each of paths was written: a memory's created:,
// else its last commit's time, as sortable text.
func (ix *Index) documentDates(paths []string) map[string]string {
	out := map[string]string{}
	docs, err := ix.Documents()
	if err != nil {
		return out
	}
	for _, d := range docs {
		if !slices.Contains(paths, d.Path) {
			continue
		}
		switch {
		case d.Kind == knowledge.KindMemory && d.Created != "":
			out[d.Path] = d.Created
		case d.Updated != "":
			out[d.Path] = d.Updated
		}
	}
	return out
}
