package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

const (
	// Format names the artifact format in every manifest.
	Format = "kbq-index"
	// FormatVersion is the version this package reads and writes. Any change to
	// the manifest's meaning, the index schema or the analysis chain bumps it.
	FormatVersion = 1
	// ManifestFile is the manifest's name inside the artifact directory.
	ManifestFile = "manifest.json"
	// DefaultDir is the artifact directory at the repository root.
	DefaultDir = ".kbq"
)

var (
	// ErrNoArtifact means the directory holds no manifest.
	ErrNoArtifact = errors.New("no kbq artifact")
	// ErrCorrupt means the manifest cannot be read as a kbq manifest.
	ErrCorrupt = errors.New("corrupt kbq artifact")
	// ErrIncompatible means the manifest's format version is not FormatVersion.
	ErrIncompatible = errors.New("incompatible kbq artifact")
)

// Manifest describes an artifact. Documents comes last in the encoding so that
// ReadHeader can stop before it.
type Manifest struct {
	Format          string                `json:"format"`
	FormatVersion   int                   `json:"format_version"`
	CompilerVersion string                `json:"compiler_version"`
	Index           string                `json:"index"`
	Source          Source                `json:"source"`
	BuiltAt         time.Time             `json:"built_at"`
	Global          Global                `json:"global"`
	Analysis        Analysis              `json:"analysis"`
	Counts          Counts                `json:"counts"`
	Fields          map[string]FieldStats `json:"fields"`
	Documents       []Document            `json:"documents"`
}

// Source says what a build read.
type Source struct {
	Mode   string `json:"mode"` // "rev", "staged" or "worktree"
	Rev    string `json:"rev,omitempty"`
	Commit string `json:"commit,omitempty"`
	Tree   string `json:"tree,omitempty"`
	// Dirty is true when the knowledge read differs from the commit's.
	Dirty bool `json:"dirty"`
}

// Global records whether the global scope was compiled in.
type Global struct {
	Included bool `json:"included"`
	// Hash is a SHA-256 over the global documents' paths and blob hashes.
	Hash string `json:"hash,omitempty"`
}

// Counts are totals over the indexed documents.
type Counts struct {
	Documents int            `json:"documents"`
	Chunks    int            `json:"chunks"`
	ByKind    map[string]int `json:"by_kind"`
	ByScope   map[string]int `json:"by_scope"`
	// Shadowing lists the scopes that shadow a document of another scope,
	// so that readers can skip the shadowing filter when none is in force.
	Shadowing []string `json:"shadowing"`
}

// FieldStats are BM25 collection statistics of one text field.
type FieldStats struct {
	Docs   uint64 `json:"docs"`   // chunks with at least one term in the field
	Tokens uint64 `json:"tokens"` // terms in the field over all chunks
}

// Add returns the sum of s and o.
func (s FieldStats) Add(o FieldStats) FieldStats {
	return FieldStats{Docs: s.Docs + o.Docs, Tokens: s.Tokens + o.Tokens}
}

// Document is one compiled document.
type Document struct {
	Path       string                `json:"path"`
	Scope      string                `json:"scope"`
	Kind       string                `json:"kind"`
	Topic      string                `json:"topic"`
	Blob       string                `json:"blob"`
	ID         int                   `json:"id,omitempty"` // memories only
	Title      string                `json:"title,omitempty"`
	Tags       []string              `json:"tags,omitempty"`
	Source     string                `json:"source,omitempty"`
	ShadowedBy []string              `json:"shadowed_by,omitempty"`
	Chunks     int                   `json:"chunks"`
	Fields     map[string]FieldStats `json:"fields,omitempty"`
}

var indexNameRE = regexp.MustCompile(`^index-[0-9a-f]{8,64}$`)

// IndexDir returns the directory of the manifest's Bluge index inside the
// artifact directory dir.
func (m *Manifest) IndexDir(dir string) (string, error) {
	if !indexNameRE.MatchString(m.Index) {
		return "", fmt.Errorf("%w: manifest names index %q", ErrCorrupt, m.Index)
	}
	return filepath.Join(dir, m.Index), nil
}

// Read reads the whole manifest of the artifact in dir.
func Read(dir string) (*Manifest, error) {
	return read(dir, false)
}

// ReadHeader reads the manifest of the artifact in dir without its Documents,
// which is all a search needs and much cheaper for large artifacts.
func ReadHeader(dir string) (*Manifest, error) {
	return read(dir, true)
}

func read(dir string, headerOnly bool) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNoArtifact, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("open manifest: %w", err)
	}
	defer f.Close()
	m, err := Decode(f, headerOnly)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return m, nil
}

// Decode reads a manifest from r and checks its format and version. With
// headerOnly it stops at the document list.
func Decode(r io.Reader, headerOnly bool) (*Manifest, error) {
	m := new(Manifest)
	fields := map[string]any{
		"format": &m.Format, "format_version": &m.FormatVersion,
		"compiler_version": &m.CompilerVersion, "index": &m.Index,
		"source": &m.Source, "built_at": &m.BuiltAt, "global": &m.Global,
		"analysis": &m.Analysis, "counts": &m.Counts, "fields": &m.Fields,
		"documents": &m.Documents,
	}
	dec := json.NewDecoder(r)
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("%w: not a JSON object", ErrCorrupt)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
		}
		key, _ := tok.(string)
		if key == "documents" && headerOnly {
			break
		}
		dst, known := fields[key]
		if !known {
			dst = new(json.RawMessage)
		}
		if err := dec.Decode(dst); err != nil {
			return nil, fmt.Errorf("%w: field %q: %v", ErrCorrupt, key, err)
		}
		if key == "format_version" {
			if err := m.checkFormat(); err != nil {
				return nil, err
			}
		}
	}
	if err := m.checkFormat(); err != nil {
		return nil, err
	}
	if !m.Analysis.Valid() {
		return nil, fmt.Errorf("%w: unknown analysis %+v", ErrCorrupt, m.Analysis)
	}
	return m, nil
}

func (m *Manifest) checkFormat() error {
	if m.Format != Format {
		return fmt.Errorf("%w: format is %q, not %q", ErrCorrupt, m.Format, Format)
	}
	if m.FormatVersion != FormatVersion {
		return fmt.Errorf("%w: format version %d, this program reads version %d", ErrIncompatible, m.FormatVersion, FormatVersion)
	}
	return nil
}

// Encode writes m as indented JSON with one document per line, so that
// manifests stay readable and diff well.
func Encode(w io.Writer, m *Manifest) error {
	header := *m
	header.Documents = nil
	head, err := json.MarshalIndent(header, "", "  ")
	if err != nil {
		return err
	}
	// Drop `"documents": null` and the closing brace; documents follow.
	cut := bytes.LastIndex(head, []byte(`,`+"\n"+`  "documents"`))
	if cut < 0 {
		return fmt.Errorf("encode manifest: documents field missing")
	}
	var buf bytes.Buffer
	buf.Write(head[:cut])
	buf.WriteString(",\n  \"documents\": [")
	for i := range m.Documents {
		if i > 0 {
			buf.WriteByte(',')
		}
		buf.WriteString("\n    ")
		line, err := json.Marshal(&m.Documents[i])
		if err != nil {
			return err
		}
		buf.Write(line)
	}
	if len(m.Documents) > 0 {
		buf.WriteString("\n  ")
	}
	buf.WriteString("]\n}\n")
	_, err = w.Write(buf.Bytes())
	return err
}
