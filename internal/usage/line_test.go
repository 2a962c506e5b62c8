package usage

import (
	"bytes"
	"encoding/json"
	"testing"
)

// appendJSON writes what encoding/json writes, so that the log reads the
// same whichever wrote it.
func TestAppendJSONIsEncoding(t *testing.T) {
	tricky := []string{"", "a.md", `say "hi"`, `back\slash`, "tab\tnew\nline\r\b\f", "\x00\x01\x1f\x7f",
		"<tag> & co", "\u2028\u2029", "ünïcødé 日本 🙂", "bad \xff utf-8 \xe2\x82", "/slash/"}
	records := []record{{T: 1}, {T: -5, Path: "x", N: 3, Days: [][2]int64{{20000, 2}, {20001, 1}}}}
	for i, s := range tricky {
		records = append(records, record{T: int64(i) << 40, Via: s, Op: s, Path: s, Blob: s, Query: s, N: i,
			Days: [][2]int64{{int64(i), -1}}})
	}
	for _, r := range records {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
		if got := r.appendJSON(nil); !bytes.Equal(got, want.Bytes()) {
			t.Errorf("appendJSON\n got %s\nwant %s", got, want.Bytes())
		}
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("plain")
	f.Add("a\"b\\c\x00\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		var want bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got := append(appendString(nil, s), '\n'); !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("appendString(%q)\n got %s\nwant %s", s, got, want.Bytes())
		}
	})
}
