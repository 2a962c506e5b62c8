package kbqcli

import (
	"testing"
	"time"

	"github.com/kbqdev/kbq/internal/cli"
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
}
