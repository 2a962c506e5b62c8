package query

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bits-and-blooms/bitset"
	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/mmap"
	"github.com/kbqdev/kbq/query/syntax"
)

// now is the clock updated: filters read; tests set it.
var now = time.Now

// ageNode matches the documents whose last change passes an updated:
// filter, or whose author an author: filter names. It reads the ages
// table, or the document list of an artifact without one. A value it
// cannot read matches nothing.
func (ix *Index) ageNode(field, value string) node {
	// A document passes by its author, or by when it changed.
	var byAuthor func(author []byte) bool
	var byTime func(updated time.Time, uncommitted bool) bool
	switch field {
	case "author":
		name := []byte(strings.ToLower(value))
		byAuthor = func(author []byte) bool {
			return len(name) > 0 && bytes.Contains(bytes.ToLower(author), name)
		}
	case "updated":
		t := now()
		test, ok := parseUpdated(value, t)
		if !ok {
			return noneNode{}
		}
		byTime = func(updated time.Time, uncommitted bool) bool {
			if uncommitted { // being changed now
				return test(t)
			}
			return !updated.IsZero() && test(updated)
		}
	}
	passes := func(author []byte, updated time.Time, uncommitted bool) bool {
		if byAuthor != nil {
			return byAuthor(author)
		}
		return byTime(updated, uncommitted)
	}
	paths := pathSetNode{}
	if a := ix.ages(); a != nil {
		for i := range a.Len() {
			var author []byte
			var updated time.Time
			var uncommitted bool
			if byAuthor != nil {
				author = a.AuthorBytes(i)
			} else {
				updated, uncommitted = a.Changed(i)
			}
			if passes(author, updated, uncommitted) {
				paths[string(a.Path(i))] = struct{}{}
			}
		}
	} else if docs, err := ix.Documents(); err == nil {
		for i := range docs {
			d := &docs[i]
			updated, _ := time.Parse(time.RFC3339, d.Updated)
			if passes([]byte(d.Author), updated, d.Uncommitted) {
				paths[d.Path] = struct{}{}
			}
		}
	}
	if len(paths) == 0 {
		return noneNode{}
	}
	return paths
}

// checkFilters reports a filter whose value cannot be read, which would
// otherwise match nothing without a word.
func checkFilters(cs []syntax.Clause) error {
	for _, c := range cs {
		if c.Kind == syntax.Filter && c.Field == "updated" {
			if _, ok := parseUpdated(c.Text, time.Time{}.AddDate(2000, 0, 0)); !ok {
				return fmt.Errorf("%w: updated:%s: want a day (updated:>2026-06-01), an RFC 3339 time, or an age (updated:<90d; d, w, m or y), after <, <=, > or >=", ErrBadFilter, c.Text)
			}
		}
		if err := checkFilters(c.Sub); err != nil {
			return err
		}
	}
	return nil
}

// parseUpdated reads an updated: value: an optional comparison (<, <=,
// >, >=; none means the same day) and a date (2026-06-01, or an RFC 3339
// time) or an age (90d, 12w, 6m, 1y: that long before now). updated:<90d
// is older than 90 days, updated:>2w changed in the last two weeks.
func parseUpdated(value string, now time.Time) (func(time.Time) bool, bool) {
	op := ""
	for _, o := range []string{"<=", ">=", "<", ">", "="} {
		if rest, ok := strings.CutPrefix(value, o); ok {
			op, value = o, rest
			break
		}
	}
	var at time.Time
	day := false
	if n, unit := len(value), byte(0); n > 1 {
		unit = value[n-1]
		if k, err := strconv.Atoi(value[:n-1]); err == nil && k >= 0 {
			switch unit {
			case 'd':
				at = now.AddDate(0, 0, -k)
			case 'w':
				at = now.AddDate(0, 0, -7*k)
			case 'm':
				at = now.AddDate(0, -k, 0)
			case 'y':
				at = now.AddDate(-k, 0, 0)
			}
		}
	}
	if at.IsZero() {
		if t, err := time.Parse("2006-01-02", value); err == nil {
			at, day = t, true
		} else if t, err := time.Parse(time.RFC3339, value); err == nil {
			at = t
		} else {
			return nil, false
		}
	}
	end := at
	if day {
		end = at.AddDate(0, 0, 1) // a date is the whole day, in UTC
	}
	switch op {
	case "<":
		return func(t time.Time) bool { return t.Before(at) }, true
	case "<=":
		return func(t time.Time) bool { return t.Before(end) }, true
	case ">":
		return func(t time.Time) bool { return !t.Before(end) }, true
	case ">=":
		return func(t time.Time) bool { return !t.Before(at) }, true
	}
	if !day {
		return func(t time.Time) bool { return t.Equal(at) }, true
	}
	return func(t time.Time) bool { return !t.Before(at) && t.Before(end) }, true
}

// ages returns the artifact's ages table, or nil when the build recorded
// none or it cannot be read (the ages are then unknown, nothing fails).
// A build keeps a replaced table for a while, as it does an index.
func (ix *Index) ages() *artifact.Ages {
	ix.agesOnce.Do(func() {
		name := ix.Manifest.Ages
		if name == "" || filepath.Base(name) != name || !strings.HasPrefix(name, artifact.AgesPrefix) {
			return
		}
		data, unmap, err := mmap.Map(filepath.Join(ix.Dir, name))
		if err != nil {
			return
		}
		if ix.agesTable, err = artifact.ParseAges(data); err != nil {
			unmap()
			return
		}
		ix.agesUnmap = unmap
	})
	return ix.agesTable
}

// ageAt returns the age of the document at path, when the build recorded
// it.
func (ix *Index) ageAt(path string) (Age, bool) {
	a := ix.ages()
	if a == nil {
		return Age{}, false
	}
	at, ok := a.Lookup(path)
	if !ok {
		return Age{}, false
	}
	age := Age{Author: at.Author, Commit: at.Commit, Uncommitted: at.Uncommitted}
	if !at.Updated.IsZero() {
		age.Updated = at.Updated.Format(time.RFC3339)
	}
	return age, true
}

// pathSetNode matches the chunks of the documents whose paths it holds. It
// reads each chunk's path from the postings' document tables, once per
// document: a filter such as updated: can name every document, and a term
// node a path took a dictionary look-up in each segment (1 s for 92,000
// documents in 64 segments).
type pathSetNode map[string]struct{}

func (n pathSetNode) match(ev *eval, _ bool) (*bitset.BitSet, error) {
	out := ev.bits()
	for _, s := range ev.e.segs {
		if err := ev.cancelled(); err != nil {
			return nil, err
		}
		in := false
		for i, count := uint32(0), uint32(s.Count()); i < count; i++ {
			_, path, chunk, ok := s.text.Document(i)
			if !ok {
				return nil, fmt.Errorf("%w: no document for chunk %d of a segment", artifact.ErrCorrupt, i)
			}
			if chunk == 0 {
				_, in = n[string(path)]
			}
			if in {
				out.Set(uint(s.base + uint64(i)))
			}
		}
	}
	live := ev.liveSet()
	out.InPlaceIntersection(live)
	ev.recycle(live)
	return out, nil
}
