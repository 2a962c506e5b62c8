package query

import (
	"testing"
	"time"
)

func TestParseUpdated(t *testing.T) {
	now := time.Date(2026, 6, 15, 12, 0, 0, 0, time.UTC)
	at := func(s string) time.Time {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			panic(err)
		}
		return t
	}
	cases := []struct {
		value string
		t     string
		want  bool
	}{
		{">2026-06-01", "2026-06-02T00:00:00Z", true},
		{">2026-06-01", "2026-06-01T23:59:59Z", false}, // after the day, not during it
		{">=2026-06-01", "2026-06-01T00:00:00Z", true},
		{"<2026-06-01", "2026-05-31T23:59:59Z", true},
		{"<2026-06-01", "2026-06-01T00:00:00Z", false},
		{"<=2026-06-01", "2026-06-01T23:00:00Z", true},
		{"2026-06-01", "2026-06-01T13:00:00Z", true},
		{"2026-06-01", "2026-06-02T00:00:00Z", false},
		{"<90d", "2026-03-01T00:00:00Z", true}, // older than 90 days
		{"<90d", "2026-04-01T00:00:00Z", false},
		{">2w", "2026-06-10T00:00:00Z", true}, // in the last two weeks
		{">2w", "2026-05-20T00:00:00Z", false},
		{"<1y", "2025-06-14T00:00:00Z", true},
		{">6m", "2026-01-01T00:00:00Z", true},
		{"2026-06-01T10:00:00Z", "2026-06-01T10:00:00Z", true},
	}
	for _, c := range cases {
		test, ok := parseUpdated(c.value, now)
		if !ok {
			t.Errorf("updated:%s did not parse", c.value)
			continue
		}
		if got := test(at(c.t)); got != c.want {
			t.Errorf("updated:%s at %s = %v, want %v", c.value, c.t, got, c.want)
		}
	}
	for _, bad := range []string{"", "soon", ">", "12x", "2026-13-01", "-3d"} {
		if _, ok := parseUpdated(bad, now); ok {
			t.Errorf("updated:%s parsed; want it refused", bad)
		}
	}
}
