package artifact

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"encoding/json"
)

// tricky are strings that JSON escapes, or nearly does.
var tricky = []string{
	"", "plain", "a\"b", `back\slash`, "tab\there", "new\nline", "<tag> & co", "\u2028\u2029",
	"ünïcødé 日本 🙂", "bad \xff utf-8", "\x00\x01\x1f\x7f", "/slash/", "%41 %s", "\ud7ff\ue000",
}

func trickyDocuments() []Document {
	var docs []Document
	for i, s := range tricky {
		docs = append(docs, Document{
			Path: ".kb/" + s + ".md", Scope: s, Kind: "topic", Topic: s, Blob: "0123456789abcdef0123456789abcdef01234567",
			ID: i - 3, Title: s, Tags: []string{s, "x"}, Source: s, ShadowedBy: []string{s},
			Chunks: i, Fields: DocFields{{Docs: uint64(i), Tokens: 1 << 40}, {}, {Docs: 3}, {Tokens: 9}},
			Seg: uint64(i) << 33, Doc: 1<<32 - 1,
		})
	}
	return append(docs, Document{Path: "a.md", Kind: "memory", Tags: []string{}, ShadowedBy: []string{}})
}

// appendDocument writes what json.Marshal writes, byte for byte: artifacts
// are reproducible, and a manifest written before the codec must compare
// equal to one written after.
func TestAppendDocumentIsMarshal(t *testing.T) {
	for _, d := range trickyDocuments() {
		want, err := json.Marshal(&d)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendDocument(nil, &d); !bytes.Equal(got, want) {
			t.Errorf("appendDocument\n got %s\nwant %s", got, want)
		}
	}
}

// The line decoder reads what the general decoder reads, or declines.
func TestDecodeDocumentLines(t *testing.T) {
	var plainDocs []Document
	for _, d := range trickyDocuments() {
		if d.ID >= 0 && plain(d.Path) && plain(d.Title) && plain(d.Scope) {
			plainDocs = append(plainDocs, d)
		}
	}
	if len(plainDocs) < 4 {
		t.Fatalf("only %d documents without escapes", len(plainDocs))
	}
	m := Manifest{Format: Format, FormatVersion: FormatVersion, Analysis: DefaultAnalysis, Documents: plainDocs, Attachments: []string{"a/b.png"}}
	var buf bytes.Buffer
	if err := Encode(&buf, &m); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	at := bytes.Index(data, documentsKey) + len(documentsKey)
	docs, tail, ok := decodeDocumentLines(data[at:], nil)
	if !ok {
		t.Fatalf("the line decoder declined what Encode wrote:\n%s", data)
	}
	if !strings.HasPrefix(string(tail), ",\n  \"attachments\"") {
		t.Errorf("tail %q", tail)
	}
	var want Manifest
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		normalize(&docs[i])
		normalize(&want.Documents[i])
	}
	if !reflect.DeepEqual(docs, want.Documents) {
		t.Errorf("line decoder\n got %+v\nwant %+v", docs, want.Documents)
	}
	got, err := decode(data, false)
	if err != nil || len(got.Documents) != len(plainDocs) || !reflect.DeepEqual(got.Attachments, m.Attachments) {
		t.Errorf("decode: %v, %d documents, attachments %v", err, len(got.Documents), got.Attachments)
	}

	for name, line := range map[string]string{
		"escaped string":  `{"path":"a\"b.md","chunks":1}`,
		"spaced":          `{"path": "a.md"}`,
		"raw tab":         "{\"path\":\"a\tb.md\"}",
		"unknown key":     `{"path":"a.md","extra":1}`,
		"float":           `{"chunks":1.5}`,
		"negative chunk":  `{"seg":-1}`,
		"leading zero":    `{"chunks":01}`,
		"null tags":       `{"tags":null}`,
		"too many field":  `{"fields":[[1,2],[1,2],[1,2],[1,2],[1,2]]}`,
		"doc over 32 bit": `{"doc":4294967296}`,
		"unterminated":    `{"path":"a.md`,
	} {
		if _, _, ok := decodeDocumentLines([]byte(line+"]"), nil); ok {
			t.Errorf("%s: the line decoder accepted %s", name, line)
		}
	}
}

// normalize makes empty lists nil, as both decoders may leave either.
func normalize(d *Document) {
	if len(d.Tags) == 0 {
		d.Tags = nil
	}
	if len(d.ShadowedBy) == 0 {
		d.ShadowedBy = nil
	}
}

// Manifests the line decoder declines still read, through the general
// decoder, with the same result.
func TestDecodeFallsBack(t *testing.T) {
	text := seal(`"format": "kbq-index", "format_version": 4, "analysis": {"stemmer": "porter", "stopwords": "lucene"}`,
		string(documentsKey)+`
    {"path": "a.md", "title": "a \"quoted\" title", "fields": [[1, 2], [3, 4]], "chunks": 2}
  ], "attachments": ["x.png"]}`)
	m, err := decode(text, false)
	if err != nil {
		t.Fatal(err)
	}
	d := m.Documents[0]
	if len(m.Documents) != 1 || d.Path != "a.md" || d.Title != `a "quoted" title` || d.Fields[1] != (FieldStats{3, 4}) || d.Chunks != 2 || m.Attachments[0] != "x.png" {
		t.Errorf("fallback decode: %+v", m)
	}
}

func FuzzDocumentLine(f *testing.F) {
	for i, s := range tricky {
		f.Add(s, s, int64(i), uint64(i))
	}
	f.Fuzz(func(t *testing.T, path, title string, id int64, seg uint64) {
		d := Document{Path: path, Kind: "topic", Title: title, ID: int(id), Tags: []string{title}, Chunks: 1, Seg: seg,
			Fields: DocFields{{Docs: seg, Tokens: seg}}}
		want, err := json.Marshal(&d)
		if err != nil {
			t.Fatal(err)
		}
		line := appendDocument(nil, &d)
		if !bytes.Equal(line, want) {
			t.Fatalf("appendDocument\n got %s\nwant %s", line, want)
		}
		docs, _, ok := decodeDocumentLines(append(line, ']'), nil)
		if !ok {
			return // escaped strings go to the general decoder
		}
		var back Document
		if err := json.Unmarshal(line, &back); err != nil {
			t.Fatal(err)
		}
		normalize(&docs[0])
		normalize(&back)
		if !reflect.DeepEqual(docs[0], back) {
			t.Fatalf("line decoder\n got %+v\nwant %+v", docs[0], back)
		}
	})
}
