package artifact

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	// A drop-in replacement for encoding/json that decodes manifests, which
	// hold a line per document, two to three times faster.
	"encoding/hex"
	"encoding/json"

	"github.com/kbqdev/kbq/internal/plainread"
	"github.com/kbqdev/kbq/knowledge"
)

const (
	// Format names the artifact format in every manifest.
	Format = "kbq-index"
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

// Manifest describes an artifact: the header that commits to one index,
// its document table and its ages table. Replacing it is what publishes a
// build.
type Manifest struct {
	// Checksum is the SHA-256 of the manifest as encoded, from the line
	// after its own to the end: every reader checks it, and the manifest
	// holds DocumentsSHA256, so a damaged byte anywhere is found by
	// whoever reads that part. Encode sets it.
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
	// Disputed maps the path of each document that disputes another
	// (contradicts:), or that another disputes, neither superseded, to
	// the paths of those it is in dispute with.
	Disputed map[string][]string `json:"disputed,omitempty"`
	// Statuses maps the path of each document whose own status is not
	// active to it: draft, deprecated or superseded.
	Statuses map[string]string `json:"statuses,omitempty"`
	// DocumentsSHA256 is the SHA-256 of the encoding from the document
	// list to the end: what a reader of the documents checks.
	DocumentsSHA256 string `json:"documents_sha256"`
	// Documents are the index's documents, in its document table (a file
	// of the index directory) rather than in the manifest, which only
	// commits to them by their checksum.
	Documents []Document `json:"-"`
	// Attachments lists the attachment files compiled against, so that an
	// incremental build knows when they change; kept in the document table.
	Attachments []string `json:"-"`
}

// Source says what a build read.
type Source struct {
	Mode   string `json:"mode"` // "rev", "staged" or "worktree"
	Rev    string `json:"rev,omitempty"`
	Commit string `json:"commit,omitempty"`
	Tree   string `json:"tree,omitempty"`
	// Dirty is true when the knowledge read differs from the commit's.
	Dirty bool `json:"dirty"`
	// Shallow is true when the history read for ages is a shallow
	// clone's: a document older than its boundary dates from it.
	Shallow bool `json:"shallow,omitempty"`
}

// Config records the project configuration (.kb/config.yaml) of a build:
// what kbq needs of it, and its hash.
type Config struct {
	// Hash is the SHA-256 of the configuration file; "" without one.
	Hash string `json:"hash,omitempty"`
	// Budgets are the context budgets in force; zero in artifacts built
	// before they were recorded, which DefaultBudgets then stand for.
	Budgets Budgets `json:"budgets"`
	// Org names the published repositories whose knowledge is in force
	// as org scopes, outermost first, when kbq reads with a database.
	Org []string `json:"org,omitempty"`
	// MinScore, when set, scales the relevance floors of searches that do
	// not say (0 keeps every result).
	MinScore *float64 `json:"min_score,omitempty"`
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
	case knowledge.ScopeGlobal:
		return b.Global
	case knowledge.ScopeProject, knowledge.ScopeOrg: // the org's is a project's
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
// of TextFields. In JSON they are [[docs, tokens], ...].
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

// UnmarshalJSON reads [[docs, tokens], ...].
func (f *DocFields) UnmarshalJSON(data []byte) error {
	var pairs [][2]uint64
	if err := json.Unmarshal(data, &pairs); err != nil || len(pairs) > len(f) {
		return fmt.Errorf("field statistics %s: want up to %d pairs of counts, [[docs, tokens], ...]", brief(errors.New(string(data))), len(f))
	}
	*f = DocFields{}
	for i, p := range pairs {
		f[i] = FieldStats{Docs: p[0], Tokens: p[1]}
	}
	return nil
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

// Read reads the whole manifest of the artifact in dir: its header and
// the documents of the index it names.
func Read(dir string) (*Manifest, error) {
	m, err := ReadHeader(dir)
	if err != nil {
		return nil, err
	}
	if m.Documents, m.Attachments, err = ReadDocuments(dir, m); err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return m, nil
}

// ReadHeader reads the manifest of the artifact in dir without its
// documents, which is all a search needs.
func ReadHeader(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	data, err := plainread.ReadFile(path, 0)
	if err == nil {
		var m *Manifest
		if m, err = decode(data); err == nil {
			return m, nil
		}
	}
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%w in %s", ErrNoArtifact, dir)
	case errors.Is(err, ErrCorrupt) || errors.Is(err, ErrIncompatible):
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return nil, fmt.Errorf("read manifest: %w", err)
}

// Decode reads a manifest from r and checks its format, version and
// checksum. The manifest holds no documents: ReadDocuments reads them.
func Decode(r io.Reader) (*Manifest, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return decode(data)
}

// decode decodes a manifest. Strings point into data, which must not
// change afterwards.
func decode(data []byte) (*Manifest, error) {
	m := new(Manifest)
	if at := decodeHeader(data, m); at >= 0 {
		return nil, fmt.Errorf("%w: the manifest is not a kbq manifest's JSON at byte %d", ErrCorrupt, at)
	}
	if err := m.checkFormat(); err != nil {
		return nil, err
	}
	if err := checkHeader(data); err != nil {
		return nil, err
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

// checkHeader checks the manifest's checksum: the SHA-256 of what follows
// the checksum's line.
func checkHeader(data []byte) error {
	if len(data) < checksumLineLen || !bytes.HasPrefix(data, checksumLine) || !bytes.Equal(data[checksumLineLen-3:checksumLineLen], []byte("\",\n")) {
		return fmt.Errorf("%w: the manifest has no checksum where kbc writes it", ErrCorrupt)
	}
	sum := sha256.Sum256(data[checksumLineLen:])
	if hex.EncodeToString(sum[:]) != string(data[len(checksumLine):checksumLineLen-3]) {
		return fmt.Errorf("%w: the manifest does not match its checksum (the file was changed or damaged)", ErrCorrupt)
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

// Encode writes m, without its documents, as indented JSON under a line
// holding its checksum. m.DocumentsSHA256 must be the checksum of its
// document table (DocumentTable sets it).
func Encode(w io.Writer, m *Manifest) error {
	header := *m
	header.Checksum = strings.Repeat("0", 64)
	head, err := json.MarshalIndent(header, "", "  ")
	if err != nil {
		return err
	}
	if !bytes.HasPrefix(head, checksumLine) {
		return fmt.Errorf("encode manifest: unexpected layout")
	}
	head = append(head, '\n')
	sum := sha256.Sum256(head[checksumLineLen:])
	hex.Encode(head[len(checksumLine):], sum[:])
	_, err = w.Write(head)
	return err
}
