package query

import (
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/artifact"
)

// now is the clock updated: filters read; tests set it.
var now = time.Now

// ageNode matches the documents whose last change passes an updated:
// filter, or whose author an author: filter names. It reads the document
// list, which other searches never load. A value it cannot read matches
// nothing.
func (ix *Index) ageNode(field, value string) node {
	docs, err := ix.Documents()
	if err != nil {
		return noneNode{}
	}
	var match func(d *artifact.Document) bool
	switch field {
	case "author":
		name := strings.ToLower(value)
		match = func(d *artifact.Document) bool {
			return name != "" && strings.Contains(strings.ToLower(d.Author), name)
		}
	case "updated":
		test, ok := parseUpdated(value, now())
		if !ok {
			return noneNode{}
		}
		t := now()
		match = func(d *artifact.Document) bool {
			if d.Uncommitted { // being changed now
				return test(t)
			}
			at, err := time.Parse(time.RFC3339, d.Updated)
			return err == nil && test(at)
		}
	}
	var paths anyNode
	for i := range docs {
		if match(&docs[i]) {
			paths = append(paths, termNode{field: artifact.FieldPath, term: docs[i].Path})
		}
	}
	if len(paths) == 0 {
		return noneNode{}
	}
	return paths
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
