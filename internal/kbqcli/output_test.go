package kbqcli

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/query"
)

func TestColor(t *testing.T) {
	env := map[string]string{}
	s := &cli.Streams{OutTTY: true, Getenv: func(k string) string { return env[k] }}
	if !s.Color() {
		t.Error("a terminal without NO_COLOR should get colour")
	}
	env["NO_COLOR"] = "1"
	if s.Color() {
		t.Error("NO_COLOR must turn colour off")
	}
	delete(env, "NO_COLOR")
	env["TERM"] = "dumb"
	if s.Color() {
		t.Error("TERM=dumb must turn colour off")
	}
	s.OutTTY = false
	delete(env, "TERM")
	if s.Color() {
		t.Error("a pipe must not get colour")
	}
}

func TestSearchTextHighlights(t *testing.T) {
	resp := &query.Response{Results: []query.Result{{
		Path: ".kb/a.md", Lines: [2]int{3, 9}, Heading: "Deploy > Rollback", Kind: "topic", Scope: "project",
		Snippet: "roll back with make rollback", Highlights: [][2]int{{15, 19}, {20, 28}}, Tags: []string{"ops"},
	}}}
	var plain, colored bytes.Buffer
	writeSearchText(&plain, resp, false)
	writeSearchText(&colored, resp, true)
	if strings.Contains(plain.String(), "\x1b[") {
		t.Errorf("plain output has escapes: %q", plain.String())
	}
	want := ".kb/a.md:3-9  Deploy > Rollback  [topic, ops · project] 0.00\n    roll back with make rollback\n"
	if plain.String() != want {
		t.Errorf("plain:\n%q\nwant\n%q", plain.String(), want)
	}
	if !strings.Contains(colored.String(), styleMatch+"make"+styleReset+" "+styleMatch+"rollback"+styleReset) {
		t.Errorf("matches are not highlighted: %q", colored.String())
	}
}

func TestHumanDurationsAndSizes(t *testing.T) {
	const day = 24 * time.Hour
	for d, want := range map[time.Duration]string{
		-time.Minute: "in the future", 30 * time.Second: "just now", time.Minute: "1 minute ago",
		5 * time.Hour: "5 hours ago", 3 * day: "3 days ago", 90 * day: "3 months ago", 800 * day: "2 years ago",
	} {
		if got := ago(d); got != want {
			t.Errorf("ago(%v) = %q, want %q", d, got, want)
		}
	}
	for n, want := range map[int64]string{512: "512 bytes", 3 << 10: "3 KiB", 29<<20 + 400<<10: "29.4 MiB", 3 << 30: "3.0 GiB"} {
		if got := humanSize(n); got != want {
			t.Errorf("humanSize(%d) = %q, want %q", n, got, want)
		}
	}
}
