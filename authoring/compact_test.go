package authoring

import (
	"errors"
	"strings"
	"testing"
	"time"
)

var compactSources = []CompactSource{
	{Path: ".kb/memories/002-b.md", Ref: "memory:2", Updated: "2024-03-01T00:00:00Z", Text: "newer"},
	{Path: ".kb/memories/001-a.md", Ref: "memory:1", Updated: "2024-01-01T00:00:00Z", Text: "older"},
	{Path: ".kb/notes/x.md", Ref: "notes/x", Text: "undated"},
}

func TestCompactPromptOldestFirst(t *testing.T) {
	system, user := CompactPrompt(compactSources)
	if !strings.Contains(system, "Cite every note") {
		t.Errorf("instructions do not ask for citations:\n%s", system)
	}
	undated := strings.Index(user, "NOTE .kb/notes/x.md (date unknown)")
	older := strings.Index(user, "NOTE .kb/memories/001-a.md (last changed 2024-01-01)")
	newer := strings.Index(user, "NOTE .kb/memories/002-b.md (last changed 2024-03-01)")
	if undated < 0 || older < 0 || newer < 0 || !(undated < older && older < newer) {
		t.Errorf("notes not oldest first:\n%s", user)
	}
}

func TestCompactSummary(t *testing.T) {
	now := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	reply := "```markdown\n---\ntitle: theirs\n---\n# Deploys\n\n- a [.kb/memories/001-a.md]\n- b [.kb/memories/002-b.md] [.kb/notes/x.md]\n```"
	got, err := CompactSummary(reply, compactSources, "the memories of scope project", now)
	if err != nil {
		t.Fatal(err)
	}
	want := `---
title: Deploys
description: The memories of scope project, compacted from 3 documents by kbc compact on 2026-11-25
supersedes: ['memory:2', 'memory:1', notes/x]
sources:
  - .kb/memories/002-b.md
  - .kb/memories/001-a.md
  - .kb/notes/x.md
---
# Deploys

- a [.kb/memories/001-a.md]
- b [.kb/memories/002-b.md] [.kb/notes/x.md]
`
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}

	_, err = CompactSummary("# Deploys\n\n- a [.kb/memories/001-a.md]", compactSources, "x", now)
	if !errors.Is(err, ErrCompact) || !strings.Contains(err.Error(), "cites 1 of the 3 sources") || !strings.Contains(err.Error(), ".kb/memories/002-b.md, .kb/notes/x.md") {
		t.Errorf("a reply dropping sources: %v", err)
	}
	if _, err := CompactSummary("```\n```", compactSources, "x", now); !errors.Is(err, ErrCompact) {
		t.Errorf("an empty reply: %v", err)
	}
}
