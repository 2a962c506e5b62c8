package artifact

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

func TestAgesRoundTrip(t *testing.T) {
	docs := []Document{
		{Path: "b/.kb/x.md", Commit: "c2", Author: "Ann", Updated: "2026-03-01T10:00:00Z"},
		{Path: ".kb/deploy.md", Commit: "c1", Author: "Bo", Updated: "2025-12-24T08:30:00Z"},
		{Path: ".kb/new.md", Uncommitted: true},
		{Path: "~/global.md"},
		{Path: "a/.kb/y.md", Commit: "c2", Author: "Ann", Updated: "2026-03-01T10:00:00Z"},
	}
	name, data := EncodeAges(docs)
	if again, _ := EncodeAges(docs); again != name || len(name) != len(AgesPrefix)+16 {
		t.Errorf("names %q and %q", name, again)
	}
	a, err := ParseAges(data)
	if err != nil {
		t.Fatal(err)
	}
	if a.Len() != len(docs) {
		t.Fatalf("Len %d", a.Len())
	}
	for _, d := range docs {
		got, ok := a.Lookup(d.Path)
		if !ok {
			t.Fatalf("%s not found", d.Path)
		}
		want := Age{Author: d.Author, Commit: d.Commit, Uncommitted: d.Uncommitted}
		if d.Updated != "" {
			want.Updated, _ = time.Parse(time.RFC3339, d.Updated)
		}
		if got != want {
			t.Errorf("%s: %+v, want %+v", d.Path, got, want)
		}
	}
	for _, p := range []string{"", ".kb", ".kb/deploy.mdx", "zzz"} {
		if _, ok := a.Lookup(p); ok {
			t.Errorf("%q found", p)
		}
	}
	for i := 1; i < a.Len(); i++ {
		if string(a.Path(i-1)) >= string(a.Path(i)) {
			t.Errorf("paths out of order: %s, %s", a.Path(i-1), a.Path(i))
		}
	}
}

// A damaged table gives wrong ages at worst.
func TestDamagedAgesNeverPanic(t *testing.T) {
	var docs []Document
	for i := range 50 {
		docs = append(docs, Document{Path: fmt.Sprintf(".kb/%03d.md", i), Author: fmt.Sprint("a", i%3), Commit: fmt.Sprint("c", i%7), Updated: "2026-01-02T03:04:05Z"})
	}
	_, data := EncodeAges(docs)
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		bad := append([]byte(nil), data...)
		switch r.IntN(2) {
		case 0:
			bad = bad[:r.IntN(len(bad))]
		default:
			for range 1 + r.IntN(8) {
				bad[r.IntN(len(bad))] = byte(r.Uint32())
			}
		}
		a, err := ParseAges(bad)
		if err != nil {
			continue
		}
		for i := range a.Len() {
			a.At(i)
			a.Lookup(string(a.Path(i)))
		}
		a.Lookup(".kb/010.md")
	}
}
