package artifact

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
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
// read back: a field added to a persisted struct and left out of its
// codec fails here.
func TestManifestRoundTripsEveryField(t *testing.T) {
	var m Manifest
	seed := 0
	fill(t, reflect.ValueOf(&m), &seed)
	// What the format itself fixes, or Encode computes.
	m.Format, m.FormatVersion, m.Analysis = Format, FormatVersion, DefaultAnalysis
	m.Index = "index-0123456789abcdef"
	m.Checksum, m.DocumentsSHA256 = "", ""
	for i := range m.Documents {
		m.Documents[i].Created = "2024-05-01T10:00:00Z"
		m.Documents[i].Expires = "2025-05-01T10:00:00Z"
	}
	var buf bytes.Buffer
	if err := Encode(&buf, &m); err != nil {
		t.Fatal(err)
	}
	got, err := decode(buf.Bytes(), false)
	if err != nil {
		t.Fatalf("decode: %v\n%s", err, buf.Bytes())
	}
	got.Checksum, got.DocumentsSHA256 = "", ""
	if !reflect.DeepEqual(*got, m) {
		t.Errorf("the manifest does not round-trip:\n got %+v\nwant %+v", *got, m)
		for i := range m.Documents {
			if !reflect.DeepEqual(got.Documents[i], m.Documents[i]) {
				t.Errorf("document %d:\n got %+v\nwant %+v", i, got.Documents[i], m.Documents[i])
			}
		}
	}
	header, err := decode(buf.Bytes(), true)
	if err != nil {
		t.Fatal(err)
	}
	header.Checksum, header.DocumentsSHA256 = "", ""
	want := m
	want.Documents, want.Attachments = nil, nil
	if !reflect.DeepEqual(*header, want) {
		t.Errorf("the header does not round-trip:\n got %+v\nwant %+v", *header, want)
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
