package kbccli

import (
	"testing"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/knowledge"
)

func TestPruneCandidates(t *testing.T) {
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	daysAgo := func(n int) time.Time { return now.Add(-time.Duration(n) * 24 * time.Hour) }
	docs := []artifact.Document{
		{Path: ".kb/context.md", Kind: knowledge.KindContext},
		{Path: ".kb/memories/001-old.md", Kind: knowledge.KindMemory, Created: daysAgo(400).Format(time.RFC3339)},
		{Path: ".kb/memories/002-new.md", Kind: knowledge.KindMemory, Created: daysAgo(10).Format(time.RFC3339)},
		{Path: ".kb/used.md", Kind: knowledge.KindTopic},
		{Path: ".kb/stale.md", Kind: knowledge.KindTopic},
		{Path: ".kb/expired.md", Kind: knowledge.KindTopic, Expires: daysAgo(1).Format(time.RFC3339)},
		{Path: ".kb/later.md", Kind: knowledge.KindTopic, Expires: daysAgo(-30).Format(time.RFC3339)},
		{Path: ".kb/article.md", Kind: knowledge.KindArticle},
		{Path: "global:.kb/g.md", Kind: knowledge.KindTopic},
		{Path: ".kb/old-way.md", Kind: knowledge.KindTopic},
		{Path: ".kb/new-way.md", Kind: knowledge.KindTopic},
		{Path: ".kb/just-replaced.md", Kind: knowledge.KindTopic},
		{Path: ".kb/deprecated.md", Kind: knowledge.KindTopic, Status: "deprecated"},
	}
	retired := map[string]string{
		".kb/old-way.md":       ".kb/new-way.md",
		".kb/just-replaced.md": ".kb/new-way.md",
		".kb/deprecated.md":    "",
	}
	// Retired since the later of the document's change and its successor's.
	changed := map[string]time.Time{
		".kb/old-way.md":       daysAgo(300),
		".kb/new-way.md":       daysAgo(100),
		".kb/just-replaced.md": daysAgo(20),
		".kb/deprecated.md":    daysAgo(95),
	}
	since := func(path, successor string) (time.Time, bool) {
		t := changed[path]
		if s := changed[successor]; s.After(t) {
			t = s
		}
		return t, true
	}
	sum := &usage.Summary{Since: daysAgo(200), Docs: map[string]*usage.Use{
		".kb/used.md":    {Count: 4, Last: daysAgo(3)},
		".kb/stale.md":   {Count: 9, Last: daysAgo(120)},
		".kb/later.md":   {Count: 1, Last: daysAgo(1)},
		".kb/new-way.md": {Count: 2, Last: daysAgo(5)},
	}}
	age := func(d artifact.Document) (time.Time, bool) {
		if t, err := time.Parse(time.RFC3339, d.Created); err == nil {
			return t, true
		}
		return daysAgo(300), true
	}
	got := map[string]string{}
	for _, c := range pruneCandidates(docs, retired, sum, now, 90, age, since) {
		got[c.Path] = c.Reason
	}
	want := map[string]string{
		".kb/old-way.md":          "superseded",
		".kb/deprecated.md":       "deprecated",
		".kb/memories/001-old.md": "never used",
		".kb/stale.md":            "unused",
		".kb/expired.md":          "expired",
	}
	if len(got) != len(want) {
		t.Errorf("candidates %v, want %v", got, want)
	}
	for p, r := range want {
		if got[p] != r {
			t.Errorf("%s: %q, want %q", p, got[p], r)
		}
	}

	// A log younger than the period says nothing of documents never used.
	sum.Since = daysAgo(30)
	for _, c := range pruneCandidates(docs, retired, sum, now, 90, age, since) {
		if c.Reason == "never used" {
			t.Errorf("%s never used, with 30 days of log for a 90-day period", c.Path)
		}
	}
}
