package usage

import (
	"bytes"
	"encoding/json"
	"reflect"
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

// parseLine reads what appendJSON writes, and whatever it reads, it reads
// as encoding/json does.
func TestParseLineReadsAppendJSON(t *testing.T) {
	for _, r := range []record{
		{T: 1795000000, Via: "cli", Op: "search", Path: ".kb/deploy.md", Blob: "0123456789abcdef0123456789abcdef01234567"},
		{T: 1795000000, Via: "mcp", Op: "get", Path: ".kb/ünïcødé 日本.md", Blob: "abc", Query: "how do we roll back"},
		{T: 1795000000, Path: ".kb/a.md", Blob: "abc", N: 12, Days: [][2]int64{{20775, 3}, {20776, 9}}},
		{T: -1, Path: "x", N: -2, Days: [][2]int64{{0, -1}}},
	} {
		line := r.appendJSON(nil)
		var got record
		if !parseLine(bytes.TrimSuffix(line, []byte("\n")), &got) {
			t.Errorf("parseLine refused %s", line)
			continue
		}
		if !reflect.DeepEqual(got, r) {
			t.Errorf("parseLine(%s) = %+v", line, got)
		}
	}
	for _, line := range []string{`{"t":1, "path":"a"}`, `{"t":1,"path":"a\"b"}`, `{"t":1,"path":"a","via":"cli"}`,
		`{"t":1,"path":"a","path":"b"}`, `{"t":01,"path":"a"}`, `{"t":1,"Path":"a"}`, `{"t":1,"path":"a","days":[]}`,
		`{"t":1,"path":"a","days":[[1,2,3]]}`, `{"t":1.5,"path":"a"}`, "{\"t\":1,\"path\":\"\xff\"}", `{"t":1,"path":"a"} `} {
		var r record
		if parseLine([]byte(line), &r) {
			t.Errorf("parseLine read %s, which is not appendJSON's", line)
		}
	}
}

func FuzzParseLine(f *testing.F) {
	f.Add([]byte(`{"t":1795000000,"via":"cli","op":"search","path":".kb/deploy.md","blob":"abc"}`))
	f.Add([]byte(`{"t":1795000000,"path":".kb/a.md","blob":"abc","n":12,"days":[[20775,3],[20776,9]]}`))
	f.Add([]byte(`{"t":-0,"path":"日本","q":"x","days":[[1,2]]}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		var got record
		if !parseLine(line, &got) {
			return
		}
		var want record
		if err := json.Unmarshal(line, &want); err != nil {
			t.Fatalf("parseLine read %q, which encoding/json refuses: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: parseLine %+v, encoding/json %+v", line, got, want)
		}
	})
}
