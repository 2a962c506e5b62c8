package artifact

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// fill sets every field of the value v points to, recursively, to a value
// that is not the zero value and differs from field to field, so that a
// codec that drops or swaps a field fails a round trip.
func fill(t *testing.T, v reflect.Value, seed *int) {
	t.Helper()
	*seed++
	n := *seed
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			v.Set(reflect.New(v.Type().Elem()))
		}
		fill(t, v.Elem(), seed)
	case reflect.Struct:
		if v.Type() == reflect.TypeOf(time.Time{}) {
			v.Set(reflect.ValueOf(time.Date(2024, 5, 1, 10, 0, n%60, 0, time.UTC)))
			return
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				fill(t, v.Field(i), seed)
			}
		}
	case reflect.String:
		v.SetString(fmt.Sprintf("s%d", n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(int64(n))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(n))
	case reflect.Float32, reflect.Float64:
		v.SetFloat(float64(n) / 100)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		for i := range 2 {
			fill(t, s.Index(i), seed)
		}
		v.Set(s)
	case reflect.Array:
		for i := range v.Len() {
			fill(t, v.Index(i), seed)
		}
	case reflect.Map:
		m := reflect.MakeMap(v.Type())
		for range 2 {
			k := reflect.New(v.Type().Key()).Elem()
			fill(t, k, seed)
			e := reflect.New(v.Type().Elem()).Elem()
			fill(t, e, seed)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		t.Fatalf("fill: a %s field: teach the test its kind", v.Type())
	}
}

// Every field of the manifest, its documents' included, is written and
// read back, through the manifest, the document table and the ages table:
// a field added to a persisted struct and left out of its codec fails
// here.
func TestManifestRoundTripsEveryField(t *testing.T) {
	var m Manifest
	seed := 0
	fill(t, reflect.ValueOf(&m), &seed)
	// What the format itself fixes, or the writers compute.
	m.Format, m.FormatVersion, m.Analysis = Format, FormatVersion, DefaultAnalysis
	m.Index = "index-0123456789abcdef"
	for i := range m.Documents {
		d := &m.Documents[i]
		d.Created = "2024-05-01T10:00:00Z"
		d.Expires = "2025-05-01T10:00:00Z"
		d.Updated = time.Date(2024, 6, 1+i, 10, 0, 0, 0, time.UTC).Format(time.RFC3339)
	}
	dir := t.TempDir()
	name, ages := EncodeAges(m.Documents)
	m.Ages = name
	if err := os.WriteFile(filepath.Join(dir, name), ages, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, m.Index), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, m.Index, DocumentsFile), m.DocumentTable(), 0o644); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Encode(&buf, &m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := Read(dir)
	if err != nil {
		t.Fatalf("read: %v\n%s", err, buf.Bytes())
	}
	got.Checksum, m.Checksum = "", ""
	if !reflect.DeepEqual(*got, m) {
		t.Errorf("the manifest does not round-trip:\n got %+v\nwant %+v", *got, m)
		for i := range m.Documents {
			if !reflect.DeepEqual(got.Documents[i], m.Documents[i]) {
				t.Errorf("document %d:\n got %+v\nwant %+v", i, got.Documents[i], m.Documents[i])
			}
		}
	}
	header, err := ReadHeader(dir)
	if err != nil {
		t.Fatal(err)
	}
	header.Checksum = ""
	want := m
	want.Documents, want.Attachments = nil, nil
	if !reflect.DeepEqual(*header, want) {
		t.Errorf("the header does not round-trip:\n got %+v\nwant %+v", *header, want)
	}
}

// A damaged document table is found, whatever byte is changed, and never
// crashes the reader.
func TestDocumentTableDamageIsDetected(t *testing.T) {
	var m Manifest
	seed := 0
	fill(t, reflect.ValueOf(&m), &seed)
	table := EncodeDocuments(m.Documents, m.Attachments)
	docs, att, err := DecodeDocuments(table)
	if err != nil || len(docs) != len(m.Documents) || len(att) != len(m.Attachments) {
		t.Fatalf("intact table: %d documents, %d attachments, %v", len(docs), len(att), err)
	}
	for i := range table {
		damaged := slices.Clone(table)
		damaged[i] ^= 0xff
		DecodeDocuments(damaged) // must not panic
	}
	for n := range len(table) - 1 {
		if _, _, err := DecodeDocuments(table[:n]); err == nil {
			t.Fatalf("a table cut to %d of %d bytes reads", n, len(table))
		}
	}
	if _, _, err := DecodeDocuments(append(slices.Clone(table), 0)); err == nil {
		t.Fatal("a table with a byte more reads")
	}
}

// Every field of the working-tree record is written and read back.
func TestWorktreeRoundTripsEveryField(t *testing.T) {
	var w Worktree
	seed := 0
	fill(t, reflect.ValueOf(&w), &seed)
	for i := range w.Files {
		w.Files[i].Blob = fmt.Sprintf("%040x", i+1)
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	if err := EncodeWorktree(&buf, &w); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, WorktreeFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := ReadWorktree(dir)
	if err != nil {
		t.Fatalf("read: %v\n%s", err, buf.Bytes())
	}
	if !reflect.DeepEqual(*got, w) {
		t.Errorf("the record does not round-trip:\n got %+v\nwant %+v", *got, w)
	}
}

// A table of version 1 (KBQDOC01, before Headings) still reads.
func TestDocumentTableVersion1Reads(t *testing.T) {
	importance := 0.5
	d := Document{Path: ".kb/a.md", Scope: "project", Kind: "context", Topic: "a", Blob: "b", Title: "T", Tags: []string{"x"},
		Importance: &importance, Meta: map[string]string{"owner": "ada"}, Chunks: 2, Seg: 7, Doc: 3}
	d.Fields[0] = FieldStats{Docs: 2, Tokens: 9}
	table := encodeDocuments([]Document{d, d}, []string{"a.png"}, 1)
	if string(table[:len(documentsMagicV1)]) != documentsMagicV1 {
		t.Fatal("not a version 1 table")
	}
	d.Headings = []uint32{1<<8 | 1<<4 | 2} // not in a version 1 table
	if !bytes.Equal(table, encodeDocuments([]Document{d, d}, []string{"a.png"}, 1)) {
		t.Fatal("a version 1 table holds the headings")
	}
	d.Headings = nil
	docs, _, err := DecodeDocuments(table)
	if err != nil || len(docs) != 2 || !reflect.DeepEqual(docs[0], d) {
		t.Fatalf("version 1 table: %+v, %v; want %+v", docs, err, d)
	}
	d.Headings = []uint32{1<<8 | 1<<4 | 2}
	docs, _, err = DecodeDocuments(EncodeDocuments([]Document{d}, nil))
	if err != nil || !reflect.DeepEqual(docs[0].Headings, d.Headings) {
		t.Errorf("version 2 table: headings %v, %v", docs, err)
	}
}
