package artifact_test

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kbqdev/kbq/artifact"
)

func terms(a artifact.Analysis, text string) string {
	an := artifact.NewAnalyzer(a)
	var out []string
	an.Terms([]byte(text), func(t []byte, _, _ int) { out = append(out, string(t)) })
	return strings.Join(out, " ")
}

func TestAnalyzer(t *testing.T) {
	tests := []struct{ text, want string }{
		{"Retries and retrying", "retri retri"},
		{"The user's API keys", "user api kei"},
		{"O'Reilly's", "o'reilli"}, // an apostrophe between letters stays; a possessive goes
		{"node_modules kbc.build a->b C++", "node modul kbc build b c"},
		{"GPT-4 v1.2.3", "gpt 4 v1 2 3"},
		{"ÉCOLE Straße", "ecol straße"}, // diacritics folded, as FTS5's unicode61 does; ß kept
		{"日本語のテキスト", "日 本 語 の テ キ ス ト"},
		{"naïve café", "naiv cafe"},
		{"Ångström Øresund Dvořák Ñandú", "angstrom øresund dvorak nandu"},
		{"’quoted’ cat’s", "quot cat"},
		{strings.Repeat("x", 65) + " kept", "kept"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := terms(artifact.DefaultAnalysis, tt.text); got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.text, got, tt.want)
		}
	}
	if got := terms(artifact.Analysis{Stemmer: "none", Stopwords: "none"}, "The Retries"); got != "the retries" {
		t.Errorf("no stemming, no stop words: %q", got)
	}
	if got := terms(artifact.Analysis{Stemmer: "porter2", Stopwords: "snowball"}, "Running very quickly"); got != "run quick" {
		t.Errorf("porter2 and snowball stop words: %q", got)
	}
}

func TestAnalyzerOffsets(t *testing.T) {
	text := []byte("Héllo, wörld")
	an := artifact.NewAnalyzer(artifact.DefaultAnalysis)
	var spans []string
	an.Terms(text, func(_ []byte, start, end int) { spans = append(spans, string(text[start:end])) })
	if strings.Join(spans, "|") != "Héllo|wörld" {
		t.Errorf("spans %q", spans)
	}
}

func FuzzAnalyzer(f *testing.F) {
	f.Add("Hello, wörld! 日本 don't a->b")
	f.Fuzz(func(t *testing.T, text string) {
		an := artifact.NewAnalyzer(artifact.DefaultAnalysis)
		data := []byte(text)
		last := 0
		an.Terms(data, func(term []byte, start, end int) {
			if start < last || end <= start || end > len(data) || len(term) == 0 {
				t.Fatalf("bad term %q at %d..%d after %d", term, start, end, last)
			}
			last = end
		})
		if string(data) != text {
			t.Fatal("analysis changed its input")
		}
	})
}

func sampleManifest() *artifact.Manifest {
	return &artifact.Manifest{
		Format: artifact.Format, FormatVersion: artifact.FormatVersion, CompilerVersion: "test",
		Index: "index-0123456789abcdef", BuiltAt: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC),
		Analysis: artifact.DefaultAnalysis,
		Source:   artifact.Source{Mode: "rev", Commit: "abc"},
		Counts:   artifact.Counts{Documents: 2, ByKind: map[string]int{"topic": 2}, ByScope: map[string]int{"project": 2}},
		Fields:   map[string]artifact.FieldStats{"body": {Docs: 2, Tokens: 10}},
		Documents: []artifact.Document{
			{Path: ".kb/a.md", Scope: "project", Kind: "topic", Topic: "a", Blob: "1", Chunks: 1},
			{Path: ".kb/b.md", Scope: "project", Kind: "topic", Topic: "b", Blob: "2", Chunks: 1, Tags: []string{"x"}},
		},
	}
}

func TestManifestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	m := sampleManifest()
	if err := os.Mkdir(filepath.Join(dir, m.Index), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, m.Index, artifact.DocumentsFile), m.DocumentTable(), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := artifact.Encode(&buf, m); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), ".kb/a.md") {
		t.Errorf("the manifest holds documents:\n%s", buf.String())
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.ManifestFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	full, err := artifact.Read(dir)
	if err != nil || len(full.Documents) != 2 || full.Documents[1].Tags[0] != "x" {
		t.Fatalf("read: %v %+v", err, full)
	}
	head, err := artifact.ReadHeader(dir)
	if err != nil || head.Documents != nil || head.Fields["body"].Tokens != 10 || head.Index != full.Index {
		t.Fatalf("header: %v %+v", err, head)
	}
	// A table that is not the one the manifest commits to is corrupt.
	other := sampleManifest()
	other.Documents = other.Documents[:1]
	if err := os.WriteFile(filepath.Join(dir, m.Index, artifact.DocumentsFile), other.DocumentTable(), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Read(dir); !errors.Is(err, artifact.ErrCorrupt) {
		t.Errorf("another table: %v", err)
	}
	os.Remove(filepath.Join(dir, m.Index, artifact.DocumentsFile))
	if _, err := artifact.Read(dir); !errors.Is(err, artifact.ErrCorrupt) {
		t.Errorf("no table: %v", err)
	}
}

func TestManifestErrors(t *testing.T) {
	for name, tt := range map[string]struct {
		text string
		want error
	}{
		"not json":     {"hello", artifact.ErrCorrupt},
		"truncated":    {`{"format": "kbq-index", "format_version": 5,` + "\n  \"index\": \"ind", artifact.ErrCorrupt},
		"other format": {`{"format": "zip", "format_version": 1}`, artifact.ErrCorrupt},
		"newer":        {`{"format": "kbq-index", "format_version": 6}`, artifact.ErrIncompatible},
		"no checksum":  {`{"format": "kbq-index", "format_version": 5, "analysis": {"stemmer": "porter", "stopwords": "lucene"}}`, artifact.ErrCorrupt},
		"older":        {`{"format": "kbq-index", "format_version": 0}`, artifact.ErrIncompatible},
		"bad analysis": {`{"format": "kbq-index", "format_version": 5, "analysis": {"stemmer": "x"}}`, artifact.ErrCorrupt},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := artifact.Decode(strings.NewReader(tt.text))
			if !errors.Is(err, tt.want) {
				t.Errorf("err = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := artifact.Read(t.TempDir()); !errors.Is(err, artifact.ErrNoArtifact) {
		t.Errorf("empty directory: %v", err)
	}
	m := sampleManifest()
	m.Index = "../../etc"
	if _, err := m.IndexDir("/a"); !errors.Is(err, artifact.ErrCorrupt) {
		t.Errorf("index name escaping the artifact: %v", err)
	}
}

func FuzzDecodeManifest(f *testing.F) {
	var buf bytes.Buffer
	artifact.Encode(&buf, sampleManifest())
	f.Add(buf.String())
	f.Add(`{"format":"kbq-index","format_version":5,"index":1}`)
	f.Fuzz(func(t *testing.T, text string) {
		m, err := artifact.Decode(strings.NewReader(text))
		if err == nil && (m.Format != artifact.Format || m.FormatVersion != artifact.FormatVersion) {
			t.Fatalf("accepted %q", text)
		}
		if err == nil {
			m.IndexDir("/x")
		}
	})
}

// largeManifest is the manifest of 12,000 documents, what an incremental
// build of a repository that size reads and writes.
func largeManifest() *artifact.Manifest {
	m := sampleManifest()
	m.Documents = nil
	for i := range 12000 {
		m.Documents = append(m.Documents, artifact.Document{
			Path: fmt.Sprintf(".kb/reference/7.%d/Microsoft.PowerShell.Core/About/about_Topic_%05d.md", i%5, i), Scope: "project", Kind: "topic",
			Topic: fmt.Sprintf("reference/7.%d/Microsoft.PowerShell.Core/About/about_Topic_%05d", i%5, i), Blob: fmt.Sprintf("%040x", i),
			Title: "about Topic: a title of some length", Tags: []string{"powershell", "reference"}, Chunks: 7,
			Fields: artifact.DocFields{{Docs: 7, Tokens: 70}, {Docs: 6, Tokens: 30}, {Docs: 7, Tokens: 14}, {Docs: 7, Tokens: 2100}},
			Seg:    uint64(i / 300), Doc: uint32(i % 300 * 7),
		})
	}
	return m
}

func BenchmarkDecodeDocuments(b *testing.B) {
	m := largeManifest()
	table := artifact.EncodeDocuments(m.Documents, nil)
	b.SetBytes(int64(len(table)))
	for b.Loop() {
		docs, _, err := artifact.DecodeDocuments(table)
		if err != nil || len(docs) != len(m.Documents) {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeDocuments(b *testing.B) {
	m := largeManifest()
	var n int
	for b.Loop() {
		n = len(artifact.EncodeDocuments(m.Documents, nil))
	}
	b.SetBytes(int64(n))
}

// A term begins with its word's first letter, lowercased: kbq's snippets
// skip stemming words whose first letter begins no term they look for.
func TestTermKeepsInitial(t *testing.T) {
	words := []string{"ies", "sses", "yes", "y", "ying", "dying", "lying", "skis", "ugly", "idly", "news", "it's",
		"I'm", "Y's", "generously", "relational", "conditional", "valenci", "hesitanci", "digitizer", "operator",
		"feudalism", "decisiveness", "hopefulness", "callousness", "formaliti", "sensitiviti", "sensibiliti",
		"triplicate", "formative", "formalize", "electriciti", "electrical", "hopeful", "goodness", "revival",
		"allowance", "inference", "airliner", "gyroscopic", "adjustable", "defensible", "irritant", "replacement",
		"adjustment", "dependent", "adoption", "homologou", "communism", "activate", "angulariti", "homologous",
		"effective", "bowdlerize", "probate", "rate", "cease", "controll", "roll", "A1", "x86s", "Ünïcode"}
	for _, src := range []string{"../README.md", "../docs/benchmarks.md"} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		artifact.Words(data, func(start, end int) { words = append(words, string(data[start:end])) })
	}
	rng := rand.New(rand.NewPCG(3, 4))
	suffixes := []string{"", "s", "es", "ies", "ed", "ing", "ly", "y", "ational", "ness", "ful", "e", "ss", "'s", "izer", "ation"}
	for range 20000 {
		var b []byte
		for range 1 + rng.IntN(5) {
			b = append(b, "aeiouybcdfgs"[rng.IntN(12)])
		}
		words = append(words, string(b)+suffixes[rng.IntN(len(suffixes))])
	}
	for _, a := range []artifact.Analysis{artifact.DefaultAnalysis, {Stemmer: "porter2", Stopwords: "lucene", Fold: "diacritics"}, {Stemmer: "none", Stopwords: "none"}} {
		an := artifact.NewAnalyzer(a)
		for _, w := range words {
			term := an.Term([]byte(w))
			c := w[0]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if term != nil && c < utf8.RuneSelf && (len(term) == 0 || term[0] != c) {
				t.Errorf("%+v: %q analyzes to %q", a, w, term)
			}
		}
	}
}
