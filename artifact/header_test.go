package artifact

import (
	"bytes"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"encoding/json"
)

// headers are manifests whose headers between them set every field, and
// leave each optional one out.
func headers() []Manifest {
	importance, minScore := 1.5, 0.5
	full := Manifest{
		Format: Format, FormatVersion: FormatVersion, CompilerVersion: "1.2.3-dev", BuildKey: "f90c65bc72f5e4d7",
		Index:    "index-73c600577e1fe461",
		Source:   Source{Mode: "rev", Rev: "HEAD~2", Commit: strings.Repeat("a", 40), Tree: strings.Repeat("b", 40), Dirty: true},
		BuiltAt:  time.Date(2026, 11, 23, 14, 17, 31, 123456789, time.UTC),
		Global:   Global{Included: true, Hash: "abc"},
		Analysis: Analysis{Stemmer: "porter2", Stopwords: "lucene", Fold: "diacritics"},
		Counts: Counts{Documents: 3, Chunks: 1 << 30, ByKind: map[string]int{"topic": 2, "memory": 1},
			ByScope: map[string]int{"project": 2, "services/api": 1}, Shadowing: []string{"services/api", "global"}},
		Fields: map[string]FieldStats{"body": {Docs: 7, Tokens: 1 << 50}, "tags": {}},
		Config: Config{Hash: "cafe", Budgets: Budgets{Global: 1, Project: 2, Directory: 3, Total: 4}, Org: []string{"github.com/acme/handbook"}, MinScore: &minScore},
		Embeddings: &Embeddings{Provider: "openai", Model: "m", Hash: "h", URL: "http://127.0.0.1:8080/v1",
			Dims: 384, Quantization: "int8"},
		Documents: []Document{{Path: "a.md", Importance: &importance}},
		Disputed:  map[string][]string{".kb/a.md": {".kb/b.md"}, ".kb/b.md": {".kb/a.md"}},
	}
	empty := Manifest{Format: Format, FormatVersion: FormatVersion, Analysis: DefaultAnalysis,
		Counts: Counts{ByKind: map[string]int{}, Shadowing: []string{}}, Fields: map[string]FieldStats{}}
	offset := full
	offset.BuiltAt = time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", -7*3600))
	offset.Embeddings = &Embeddings{Provider: "local", Model: "all-MiniLM-L6-v2", Dims: 384, Quantization: "int8"}
	offset.Counts.Shadowing = nil
	return []Manifest{full, empty, offset, {Format: "x", FormatVersion: -1}}
}

// head is an encoded manifest.
func head(tb testing.TB, m *Manifest) []byte {
	tb.Helper()
	m.DocumentTable()
	var buf bytes.Buffer
	if err := Encode(&buf, m); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

// The header reader reads what the general decoder reads from every header
// Encode writes.
func TestDecodeHeader(t *testing.T) {
	for i, m := range headers() {
		data := head(t, &m)
		var got, want Manifest
		if at := decodeHeader(data, &got); at >= 0 {
			t.Fatalf("header %d: the header reader refused what Encode wrote, at byte %d:\n%s", i, at, data)
		}
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("header %d:\n got %+v\nwant %+v", i, got, want)
		}
		if len(got.Checksum) != 64 || len(got.DocumentsSHA256) != 64 {
			t.Errorf("header %d: checksums %q and %q", i, got.Checksum, got.DocumentsSHA256)
		}
		m.Documents, m.Attachments = nil, nil
		m.Checksum, m.DocumentsSHA256 = got.Checksum, got.DocumentsSHA256
		if !reflect.DeepEqual(got, m) {
			t.Errorf("header %d does not round-trip:\n got %+v\nwant %+v", i, got, m)
		}
	}
}

// The header reader reads any JSON of the header's types, as encoding/json
// does: escapes, white space and keys of other versions, skipped.
func TestDecodeHeaderReadsJSON(t *testing.T) {
	for name, text := range map[string]string{
		"escaped string":      `{"format": "kbq-\u0069ndex\n\"\\\/\t\u00e9\ud83d\ude00"}`,
		"lone surrogate":      `{"format": "a\ud800b"}`,
		"unknown key":         `{"format": "kbq-index", "extra": [1, -2.5e+3, {"a": [true, false, null]}, "x"]}`,
		"unknown nested":      `{"source": {"mode": "rev", "branch": "main"}, "counts": {"future": {}}}`,
		"white space":         "{ \"counts\" : { \"by_kind\" : { \"topic\" : 1 } } }\n",
		"null embeddings":     `{"embeddings": null, "fields": null, "retired": null}`,
		"keys in any case":    "{\"FORMAT\": \"a\", \"Source\": {\"CommIt\": \"c\"}, \"\u017fource\": {\"tree\": \"t\"}, \"\u212aey\": 1}",
		"map keys as written": `{"retired": {".kb/Old.md": "", ".kb/old.md": "x"}, "counts": {"by_scope": {"Docs": 1}}, "fields": {"Title": {"Docs": 2}}}`,
		"keys twice":          `{"counts": {"by_kind": {"a": 1}, "by_kind": {"b": 2}}, "embeddings": {"model": "m"}, "embeddings": {"dims": 3}}`,
	} {
		var got, want Manifest
		if at := decodeHeader([]byte(text), &got); at >= 0 {
			t.Errorf("%s: refused at byte %d: %s", name, at, text)
			continue
		}
		if err := json.Unmarshal([]byte(text), &want); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, want)
		}
	}
}

// What is not a header is refused, where it stops being one.
func TestDecodeHeaderRefuses(t *testing.T) {
	for name, c := range map[string]struct {
		text string
		at   int
	}{
		"control char":    {"{\"format\": \"kbq\tindex\"}", 12},
		"bad utf-8":       {"{\"format\": \"kbq\xffindex\"}", 12},
		"bad escape":      {`{"format": "kbq\xindex"}`, 12},
		"short escape":    {`{"format": "kbq\u00"}`, 12},
		"float":           {`{"format_version": 3.0}`, 20},
		"string for int":  {`{"format_version": "3"}`, 19},
		"int for string":  {`{"format": 3}`, 11},
		"trailing":        {`{"format": "kbq-index"} x`, 24},
		"unknown bad":     {`{"future": [1,]}`, 14},
		"bad time":        {`{"built_at": "yesterday"}`, 24},
		"unterminated":    {`{"format": "kbq-index"`, 22},
		"nested trailing": {`{"counts": {"by_kind": {"topic": 1,}}}`, 35},
		"deep":            {`{"x": ` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `}`, 71},
	} {
		var m Manifest
		if at := decodeHeader([]byte(c.text), &m); at != c.at {
			t.Errorf("%s: refused at %d, want %d: %s", name, at, c.at, c.text)
		}
	}
	if _, err := decode(seal(`"format": 3`)); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "at byte") {
		t.Errorf("a manifest of the wrong types: %v", err)
	}
}

// An artifact of an older kbc names the variable of its endpoint's key:
// it reads, and the name is dropped, never to choose a key.
func TestKeyEnvOfOlderArtifactsIsDropped(t *testing.T) {
	m, err := decode(seal(`"format": "kbq-index", "format_version": 5,
  "analysis": {"stemmer": "porter", "stopwords": "lucene"},
  "embeddings": {"provider": "openai", "model": "m", "url": "http://h/v1", "key_env": "KBQ_DATABASE_URL", "dims": 4}`))
	if err != nil || m.Embeddings == nil || m.Embeddings.URL != "http://h/v1" || m.Embeddings.Dims != 4 {
		t.Fatalf("manifest with key_env: %+v, %v", m, err)
	}
	if data, _ := json.Marshal(m.Embeddings); strings.Contains(string(data), "KBQ_DATABASE_URL") {
		t.Errorf("the key's variable was kept: %s", data)
	}
}

// Whatever the header reader accepts, the general decoder reads the same.
func FuzzDecodeHeader(f *testing.F) {
	for _, m := range headers() {
		f.Add(head(f, &m))
	}
	f.Add([]byte(`{"counts": {"shadowing": [ "a" , "b" ]}, "embeddings": null, "fields": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Manifest
		if decodeHeader(data, &got) >= 0 {
			return
		}
		var want Manifest
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatalf("the header reader accepted what the general decoder rejects (%v):\n%s", err, data)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s\n got %+v\nwant %+v", data, got, want)
		}
	})
}

// Any one byte changed in a manifest is found by every reader.
func TestManifestDamageIsDetected(t *testing.T) {
	m := headers()[0]
	m.Documents = []Document{{Path: ".kb/deploy.md", Scope: "project", Kind: "topic", Topic: "deploy", Blob: "0123456789abcdef0123456789abcdef01234567", Chunks: 2}}
	data := head(t, &m)
	if _, err := decode(slices.Clone(data)); err != nil {
		t.Fatalf("intact manifest: %v", err)
	}
	for i := range data {
		damaged := slices.Clone(data)
		damaged[i] ^= 0x01
		if damaged[i] == '\n' || data[i] == '\n' {
			damaged[i] = data[i] ^ 0x02
		}
		if _, err := decode(damaged); err == nil {
			t.Fatalf("byte %d (%q → %q) changed, and the manifest still reads", i, data[i], damaged[i])
		}
	}
}

// BenchmarkDecodeHeader reads a full header with the header reader, and
// with encoding/json for comparison.
func BenchmarkDecodeHeader(b *testing.B) {
	m := headers()[0]
	data := head(b, &m)
	b.Run("reader", func(b *testing.B) {
		for b.Loop() {
			var got Manifest
			if decodeHeader(data, &got) >= 0 {
				b.Fatal("refused")
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		for b.Loop() {
			var got Manifest
			if err := json.Unmarshal(data, &got); err != nil {
				b.Fatal(err)
			}
		}
	})
}
