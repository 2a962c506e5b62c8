package artifact

import (
	"bytes"
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
	importance := 1.5
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
		Config: Config{Hash: "cafe", Budgets: Budgets{Global: 1, Project: 2, Directory: 3, Total: 4}},
		Embeddings: &Embeddings{Provider: "openai", Model: "m", Hash: "h", URL: "http://127.0.0.1:8080/v1",
			Dims: 384, Quantization: "int8"},
		Documents: []Document{{Path: "a.md", Importance: &importance}},
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
		if !decodeHeader(data, &got) {
			t.Fatalf("header %d: the header reader declined what Encode wrote:\n%s", i, data)
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

// What the header reader declines still reads, through the general decoder.
func TestDecodeHeaderDeclines(t *testing.T) {
	for name, text := range map[string]string{
		"unknown key":     `{"format": "kbq-index", "extra": 1}`,
		"escaped string":  `{"format": "kbq-\u0069ndex"}`,
		"control char":    "{\"format\": \"kbq\tindex\"}",
		"bad utf-8":       "{\"format\": \"kbq\xffindex\"}",
		"float":           `{"format_version": 3.0}`,
		"string for int":  `{"format_version": "3"}`,
		"int for string":  `{"format": 3}`,
		"null string":     `{"format": null}`,
		"document list":   `{"documents": []}`,
		"trailing":        `{"format": "kbq-index"} x`,
		"unknown nested":  `{"source": {"mode": "rev", "branch": "main"}}`,
		"bad time":        `{"built_at": "yesterday"}`,
		"unterminated":    `{"format": "kbq-index"`,
		"nested trailing": `{"counts": {"by_kind": {"topic": 1,}}}`,
	} {
		var m Manifest
		if decodeHeader([]byte(text), &m) {
			t.Errorf("%s: the header reader accepted %s", name, text)
		}
	}
	m, err := decode(seal(`"format": "kbq-\u0069ndex", "format_version": 5, "future": {"a": [1]},
  "analysis": {"stemmer": "porter", "stopwords": "lucene"}`))
	if err != nil || m.Format != Format || m.Analysis.Stopwords != "lucene" {
		t.Errorf("fallback: %+v, %v", m, err)
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
		if !decodeHeader(data, &got) {
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
