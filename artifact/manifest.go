package artifact

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	// A drop-in replacement for encoding/json that decodes manifests, which
	// hold a line per document, two to three times faster.
	"encoding/hex"
	"encoding/json"
)

const (
	// Format names the artifact format in every manifest.
	Format = "kbq-index"
	// FormatVersion is the version this package reads and writes. Any change to
	// the manifest's meaning, the index schema or the analysis chain bumps it.
	FormatVersion = 4
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
	// Checksum is the SHA-256 of the header as encoded, from the line after
	// its own to the document list: a reader of the header checks it, and
	// the header holds DocumentsSHA256, so a damaged byte anywhere is found
	// by whoever reads that part. Encode sets both.
	Checksum        string `json:"checksum"`
	Format          string `json:"format"`
	FormatVersion   int    `json:"format_version"`
	CompilerVersion string `json:"compiler_version"`
	// BuildKey identifies the compiler settings that shape compiled
	// documents; an incremental build reuses only an artifact with the same.
	BuildKey string `json:"build_key"`
	Index    string `json:"index"`
	// Ages names the ages table beside the manifest (ages.go); "" when
	// the build recorded no ages.
	Ages     string                `json:"ages,omitempty"`
	Source   Source                `json:"source"`
	BuiltAt  time.Time             `json:"built_at"`
	Global   Global                `json:"global"`
	Analysis Analysis              `json:"analysis"`
	Counts   Counts                `json:"counts"`
	Fields   map[string]FieldStats `json:"fields"`
	// Config is the project configuration the build used.
	Config Config `json:"config"`
	// Embeddings, when set, says how the index's vectors (VectorsFile)
	// were made.
	Embeddings *Embeddings `json:"embeddings,omitempty"`
	// Retired maps the path of each document another supersedes, or whose
	// status is deprecated or superseded, to the path of the document that
	// supersedes it ("" for none): search and context leave them out.
	Retired map[string]string `json:"retired,omitempty"`
	// Statuses maps the path of each document whose own status is not
	// active to it: draft, deprecated or superseded.
	Statuses map[string]string `json:"statuses,omitempty"`
	// DocumentsSHA256 is the SHA-256 of the encoding from the document
	// list to the end: what a reader of the documents checks.
	DocumentsSHA256 string     `json:"documents_sha256"`
	Documents       []Document `json:"documents"`
	// Attachments lists the attachment files compiled against, so that an
	// incremental build knows when they change.
	Attachments []string `json:"attachments,omitempty"`
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

// Config records the project configuration (.kb/config.yaml) of a build:
// what kbq needs of it, and its hash.
type Config struct {
	// Hash is the SHA-256 of the configuration file; "" without one.
	Hash string `json:"hash,omitempty"`
	// Budgets are the context budgets in force; zero in artifacts built
	// before they were recorded, which DefaultBudgets then stand for.
	Budgets Budgets `json:"budgets"`
}

// Budgets are the sizes, in bytes of body text, that the context of each
// kind of scope should keep within, and the most kbq context assembles.
type Budgets struct {
	Global    int `json:"global"`
	Project   int `json:"project"`
	Directory int `json:"directory"`
	// Total caps the assembled context: kbq context warns past half of it
	// and cuts past it.
	Total int `json:"total"`
}

// DefaultBudgets are the budgets without configuration.
var DefaultBudgets = Budgets{Global: 3 << 10, Project: 7 << 10, Directory: 7 << 10, Total: 20 << 10}

// Or returns b with its unset budgets taken from d.
func (b Budgets) Or(d Budgets) Budgets {
	return Budgets{Global: cmp.Or(b.Global, d.Global), Project: cmp.Or(b.Project, d.Project),
		Directory: cmp.Or(b.Directory, d.Directory), Total: cmp.Or(b.Total, d.Total)}
}

// Of returns the budget of a scope's context.
func (b Budgets) Of(scope string) int {
	switch scope {
	case ScopeGlobal:
		return b.Global
	case ScopeProject:
		return b.Project
	}
	return b.Directory
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

// DocFields are a document's statistics for each text field, in the order
// of TextFields. In JSON they are [[docs, tokens], ...], which is short and
// quick to decode: manifests hold one per document.
type DocFields [4]FieldStats

// Get returns the statistics of field.
func (f *DocFields) Get(field string) FieldStats {
	for i, name := range TextFields {
		if name == field {
			return f[i]
		}
	}
	return FieldStats{}
}

// Add adds s to the statistics of field.
func (f *DocFields) Add(field string, s FieldStats) {
	for i, name := range TextFields {
		if name == field {
			f[i] = f[i].Add(s)
			return
		}
	}
}

// MarshalJSON writes [[docs, tokens], ...].
func (f DocFields) MarshalJSON() ([]byte, error) {
	return f.appendJSON(make([]byte, 0, 48)), nil
}

func (f *DocFields) appendJSON(b []byte) []byte {
	b = append(b, '[')
	for i, s := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		b = strconv.AppendUint(b, s.Docs, 10)
		b = append(b, ',')
		b = strconv.AppendUint(b, s.Tokens, 10)
		b = append(b, ']')
	}
	return append(b, ']')
}

// UnmarshalJSON reads [[docs, tokens], ...], with the document scanner: a
// manifest holds one per document, and decoding them as generic JSON arrays
// was a fifth of the time of reading a manifest.
func (f *DocFields) UnmarshalJSON(data []byte) error {
	compact := make([]byte, 0, len(data))
	for _, c := range data {
		if c != ' ' && c != '\n' && c != '\r' && c != '\t' {
			compact = append(compact, c)
		}
	}
	s := docScanner{data: compact}
	if !s.fields(f) || s.i != len(compact) {
		return fmt.Errorf("field statistics %s: want up to %d pairs of counts, [[docs, tokens], ...]", brief(errors.New(string(data))), len(f))
	}
	return nil
}

// Document is one compiled document.
type Document struct {
	Path       string   `json:"path"`
	Scope      string   `json:"scope"`
	Kind       string   `json:"kind"`
	Topic      string   `json:"topic"`
	Blob       string   `json:"blob"`
	ID         int      `json:"id,omitempty"` // memories only
	Title      string   `json:"title,omitempty"`
	Tags       []string `json:"tags,omitempty"`
	Source     string   `json:"source,omitempty"`
	ShadowedBy []string `json:"shadowed_by,omitempty"`
	// Importance is the document's importance, 0 to 1, when it sets one.
	Importance *float64 `json:"importance,omitempty"`
	// Created is when a memory was created or an article fetched, and
	// Expires when the document sets a date past which kbc prune may
	// remove it: RFC 3339 timestamps, or "".
	Created string `json:"created,omitempty"`
	Expires string `json:"expires,omitempty"`
	// Status is the document's own status, "" for active: draft,
	// deprecated or superseded.
	Status string `json:"status,omitempty"`
	// Supersedes lists the documents it replaces, as written: topic keys
	// or memory:ID.
	Supersedes []string `json:"supersedes,omitempty"`
	// Commit, Author and Updated say which commit last changed the
	// document's file, whose change it was and when it landed (the
	// committer's time, RFC 3339), along the first-parent history of the
	// commit built; Uncommitted marks a file the build read changed since
	// then. All empty for the global scope, which is not in the repository.
	Commit      string    `json:"commit,omitempty"`
	Author      string    `json:"author,omitempty"`
	Updated     string    `json:"updated,omitempty"`
	Uncommitted bool      `json:"uncommitted,omitempty"`
	Chunks      int       `json:"chunks"`
	Fields      DocFields `json:"fields"`
	// Seg and Doc locate the document's chunks in the index: segment Seg,
	// document numbers Doc to Doc+Chunks-1.
	Seg uint64 `json:"seg"`
	Doc uint32 `json:"doc"`
}

// validIndexName reports whether name is index- and 8 to 64 hex digits.
// (A regular expression for it costs a millisecond to compile at start-up.)
func validIndexName(name string) bool {
	hex, ok := strings.CutPrefix(name, "index-")
	if !ok || len(hex) < 8 || len(hex) > 64 {
		return false
	}
	for _, c := range []byte(hex) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// IndexDir returns the directory of the manifest's Bluge index inside the
// artifact directory dir.
func (m *Manifest) IndexDir(dir string) (string, error) {
	if !validIndexName(m.Index) {
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
	var m *Manifest
	var err error
	if headerOnly {
		var f *os.File
		if f, err = os.Open(path); err == nil {
			m, err = Decode(f, true)
			f.Close()
		}
	} else {
		var data []byte
		if data, err = os.ReadFile(path); err == nil {
			m, err = decode(data, false)
		}
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w in %s", ErrNoArtifact, dir)
	case errors.Is(err, ErrCorrupt) || errors.Is(err, ErrIncompatible):
		return nil, fmt.Errorf("%s: %w", path, err)
	case err != nil:
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return m, nil
}

// documentsKey starts the document list in manifests written by Encode. It
// cannot occur earlier: a newline inside a JSON string is escaped.
var documentsKey = []byte(",\n  \"documents\": [")

// Decode reads a manifest from r and checks its format and version. With
// headerOnly it stops reading at the document list.
func Decode(r io.Reader, headerOnly bool) (*Manifest, error) {
	if !headerOnly {
		data, err := io.ReadAll(r)
		if err != nil {
			return nil, err
		}
		return decode(data, false)
	}
	// The header is a kilobyte or two: read a page, then more as needed.
	data := make([]byte, 0, 4<<10)
	for {
		if len(data) == cap(data) {
			data = slices.Grow(data, len(data))
		}
		n, err := r.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		from := max(0, len(data)-n-len(documentsKey))
		if i := bytes.Index(data[from:], documentsKey); i >= 0 {
			return decode(data[:from+i+len(documentsKey)], true)
		}
		if err == io.EOF {
			return decode(data, true)
		}
		if err != nil {
			return nil, err
		}
	}
}

// decode decodes a whole manifest, or with headerOnly its beginning, which
// may stop where the document list starts. Strings point into data, which
// must not change afterwards: a manifest holds a few strings per document,
// and copying them took a third of the time of decoding it.
func decode(data []byte, headerOnly bool) (*Manifest, error) {
	m := new(Manifest)
	head := data
	header := bytes.Index(data, documentsKey)
	if header >= 0 {
		head = append(data[:header:header], '}')
	}
	if !decodeHeader(head, m) {
		*m = Manifest{}
		if err := json.Unmarshal(head, m); err != nil {
			return nil, fmt.Errorf("%w: %s", ErrCorrupt, brief(err))
		}
	}
	if err := m.checkFormat(); err != nil {
		return nil, err
	}
	if header < 0 {
		return nil, fmt.Errorf("%w: the manifest has no document list", ErrCorrupt)
	}
	if err := checkHeader(data[:header]); err != nil {
		return nil, err
	}
	if !headerOnly {
		if err := checkDocuments(data[:header], data[header:]); err != nil {
			return nil, err
		}
	}
	if !headerOnly {
		// One document per line: room for all of them, in one allocation.
		docs := make([]Document, 0, bytes.Count(data[header:], []byte("\n")))
		docs, tail, ok := decodeDocumentLines(data[header+len(documentsKey):], docs)
		if ok {
			// What follows the documents, attachments for one.
			tail = bytes.TrimLeft(tail, " \n\r\t")
			if len(tail) > 0 && tail[0] == ',' {
				err := json.Unmarshal(append([]byte{'{'}, tail[1:]...), m)
				ok = err == nil
			} else {
				ok = len(bytes.TrimSpace(tail)) == 1 && tail[0] == '}'
			}
		}
		if ok {
			m.Documents = docs
		} else {
			// Not the layout Encode writes: the general decoder.
			m.Documents = docs[:0]
			if err := json.Unmarshal(data, m); err != nil {
				return nil, fmt.Errorf("%w: %s", ErrCorrupt, brief(err))
			}
		}
	}
	if headerOnly {
		m.Documents, m.Attachments = nil, nil
	}
	if !m.Analysis.Valid() {
		return nil, fmt.Errorf("%w: unknown analysis %+v", ErrCorrupt, m.Analysis)
	}
	return m, nil
}

// checksumLine starts every manifest Encode writes; the checksum's 64 hex
// digits and `",` and a newline follow it.
var checksumLine = []byte("{\n  \"checksum\": \"")

// checksumLineLen is the length of the checksum's line: checksumLine, the
// digits, `",` and a newline.
var checksumLineLen = len(checksumLine) + 64 + 3

// checkHeader checks the header's checksum: the SHA-256 of what follows
// the checksum's line.
func checkHeader(head []byte) error {
	if len(head) < checksumLineLen || !bytes.HasPrefix(head, checksumLine) || !bytes.Equal(head[checksumLineLen-3:checksumLineLen], []byte("\",\n")) {
		return fmt.Errorf("%w: the manifest has no checksum where kbc writes it", ErrCorrupt)
	}
	sum := sha256.Sum256(head[checksumLineLen:])
	if hex.EncodeToString(sum[:]) != string(head[len(checksumLine):checksumLineLen-3]) {
		return fmt.Errorf("%w: the manifest's header does not match its checksum (the file was changed or damaged)", ErrCorrupt)
	}
	return nil
}

// checkDocuments checks the document list against the checksum the
// header records.
func checkDocuments(head, docs []byte) error {
	i := bytes.Index(head, []byte(`"documents_sha256": "`))
	if i < 0 || len(head) < i+21+64 {
		return fmt.Errorf("%w: the manifest records no checksum of its documents", ErrCorrupt)
	}
	want := head[i+21 : i+21+64]
	sum := sha256.Sum256(docs)
	if hex.EncodeToString(sum[:]) != string(want) {
		return fmt.Errorf("%w: the manifest's documents do not match their checksum (the file was changed or damaged)", ErrCorrupt)
	}
	return nil
}

// brief shortens a decoding error, which may quote the input, to one line.
func brief(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	if len(msg) > 120 {
		msg = msg[:120] + "…"
	}
	return msg
}

func (m *Manifest) checkFormat() error {
	if m.Format != Format {
		return fmt.Errorf("%w: format is %q, not %q", ErrCorrupt, m.Format, Format)
	}
	switch {
	case m.FormatVersion > FormatVersion:
		return fmt.Errorf("%w: format version %d is newer than the version %d this program reads (built by kbc %s): upgrade kbq, or rebuild it with this version's kbc build", ErrIncompatible, m.FormatVersion, FormatVersion, m.CompilerVersion)
	case m.FormatVersion != FormatVersion:
		return fmt.Errorf("%w: format version %d is older than the version %d this program reads: rebuild it with kbc build", ErrIncompatible, m.FormatVersion, FormatVersion)
	}
	return nil
}

// Encode writes m as indented JSON with one document per line, so that
// manifests stay readable and diff well.
//
// The documents are encoded twice, once for their checksum, which the
// header holds, and once to write them: a manifest of 100,000 documents is
// tens of megabytes, and holding it all costs page faults.
func Encode(w io.Writer, m *Manifest) error {
	sum := sha256.New()
	if err := encodeDocuments(sum, m); err != nil {
		return err
	}
	header := *m
	header.Documents, header.Attachments = nil, nil
	header.Checksum = strings.Repeat("0", 64)
	header.DocumentsSHA256 = hex.EncodeToString(sum.Sum(nil))
	head, err := json.MarshalIndent(header, "", "  ")
	if err != nil {
		return err
	}
	// Drop `"documents": null` and the closing brace; documents follow.
	cut := bytes.LastIndex(head, []byte(`,`+"\n"+`  "documents"`))
	if cut < 0 || !bytes.HasPrefix(head, checksumLine) {
		return fmt.Errorf("encode manifest: unexpected layout")
	}
	head = head[:cut]
	headSum := sha256.Sum256(head[checksumLineLen:])
	hex.Encode(head[len(checksumLine):], headSum[:])
	bw := bufio.NewWriterSize(w, 64<<10)
	bw.Write(head)
	if err := encodeDocuments(bw, m); err != nil {
		return err
	}
	return bw.Flush()
}

// encodeDocuments writes the manifest from its document list to the end.
func encodeDocuments(w io.Writer, m *Manifest) error {
	bw, ok := w.(*bufio.Writer)
	if !ok {
		bw = bufio.NewWriterSize(w, 64<<10)
	}
	bw.WriteString(",\n  \"documents\": [")
	var scratch []byte
	for i := range m.Documents {
		if i > 0 {
			bw.WriteByte(',')
		}
		bw.WriteString("\n    ")
		scratch = appendDocument(scratch[:0], &m.Documents[i])
		bw.Write(scratch)
	}
	if len(m.Documents) > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]")
	if len(m.Attachments) > 0 {
		att, err := json.Marshal(m.Attachments)
		if err != nil {
			return err
		}
		bw.WriteString(",\n  \"attachments\": ")
		bw.Write(att)
	}
	bw.WriteString("\n}\n")
	if !ok {
		return bw.Flush()
	}
	return nil
}
