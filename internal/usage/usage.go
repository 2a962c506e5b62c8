// Package usage records which knowledge documents kbq hands out, and
// reads the record back: the signal behind the hot index of kbq context,
// the most and least used documents of kbq stats, and kbc prune.
//
// The log lives outside the artifact and outside tracked files, in
// $XDG_STATE_HOME/kbq/usage/ (~/.local/state/kbq/usage/ by default), one
// file per artifact directory. Each record is a line of JSON: when, through
// which door, which document (path and blob). Query text is recorded only
// with KBQ_USAGE_QUERIES=1. Recording is off with KBQ_USAGE=off, and by
// default when CI=true.
//
// Many processes append at once: each appends its records with one write
// under a shared lock. When the log passes maxLogBytes and twice its size
// after the last compaction, the process that wrote last compacts it
// under an exclusive lock into one line per document (total, last use,
// and daily counts for the recent window), so the log stays bounded by
// the number of documents, and a log whose summary alone passes
// maxLogBytes is not compacted again on every record. A log that cannot
// be read or written is reported, never fatal: kbq answers anyway.
package usage

import (
	"bufio"
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/internal/filelock"
	"github.com/kbqdev/kbq/internal/safefs"
)

// Doors through which documents leave kbq.
const (
	ViaCLI  = "cli"
	ViaMCP  = "mcp"
	ViaHTTP = "http"
)

// Operations that hand documents out.
const (
	OpSearch = "search"
	OpGet    = "get"
)

// Window is how far back "recent" use reaches: the hot index ranks by use
// in it.
const Window = 30 * 24 * time.Hour

// maxLogBytes is the size past which the log is compacted.
const maxLogBytes = 256 << 10

// compactedPrefix starts a compacted log's first line, which gives the
// compacted log's size: {"compacted":BYTES}. The log is compacted again
// once it has doubled.
const compactedPrefix = `{"compacted":`

// Event is a document handed out.
type Event struct {
	Time  time.Time
	Via   string // ViaCLI, ViaMCP, ViaHTTP
	Op    string // OpSearch, OpGet
	Path  string // the document's path in the artifact
	Blob  string // its git blob hash, when known
	Query string // only with KBQ_USAGE_QUERIES=1
}

// record is a line of the log: an event, or (N > 0) a compacted summary
// of one document's earlier events.
type record struct {
	T     int64  `json:"t"` // Unix seconds: the event, or a summary's last use
	Via   string `json:"via,omitempty"`
	Op    string `json:"op,omitempty"`
	Path  string `json:"path"`
	Blob  string `json:"blob,omitempty"`
	Query string `json:"q,omitempty"`
	// A summary: N uses in all, Days the uses of recent days (Unix day
	// number and count).
	N    int        `json:"n,omitempty"`
	Days [][2]int64 `json:"days,omitempty"`
}

// Log is the usage log of one artifact.
type Log struct {
	path    string
	queries bool
	now     func() time.Time
}

// Open returns the log of the artifact in artifactDir, or nil when
// recording is off (KBQ_USAGE=off, or CI=true unless KBQ_USAGE=on).
// getenv reads the environment.
func Open(artifactDir string, getenv func(string) string) (*Log, error) {
	switch strings.ToLower(getenv("KBQ_USAGE")) {
	case "off", "0", "false", "no":
		return nil, nil
	case "on", "1", "true", "yes":
	default:
		if ci := strings.ToLower(getenv("CI")); ci == "true" || ci == "1" {
			return nil, nil
		}
	}
	path, err := File(artifactDir, getenv)
	if err != nil {
		return nil, err
	}
	return &Log{path: path, queries: getenv("KBQ_USAGE_QUERIES") == "1", now: time.Now}, nil
}

// File is the path of the usage log of the artifact in artifactDir, which
// need not exist.
func File(artifactDir string, getenv func(string) string) (string, error) {
	abs, err := filepath.Abs(artifactDir)
	if err != nil {
		return "", err
	}
	if resolved, err := filepath.EvalSymlinks(abs); err == nil {
		abs = resolved
	}
	state := getenv("XDG_STATE_HOME")
	if state == "" || !filepath.IsAbs(state) {
		switch {
		case getenv("HOME") != "":
			state = filepath.Join(getenv("HOME"), ".local", "state")
		case getenv("LOCALAPPDATA") != "": // Windows
			state = getenv("LOCALAPPDATA")
		default:
			return "", errors.New("no directory to keep the usage log in: set HOME or XDG_STATE_HOME")
		}
	}
	sum := sha256.Sum256([]byte(abs))
	name := filepath.Base(filepath.Dir(abs)) // the repository, for people looking
	return filepath.Join(state, "kbq", "usage", sanitize(name)+"-"+hex.EncodeToString(sum[:6])+".jsonl"), nil
}

func sanitize(s string) string {
	s = strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' {
			return r
		}
		return '_'
	}, s)
	return cmp.Or(strings.Trim(s, "."), "root")
}

// Record appends events to the log in one write.
func (l *Log) Record(events []Event) error {
	if l == nil || len(events) == 0 {
		return nil
	}
	var buf []byte // a line per record
	for _, e := range events {
		r := record{T: cmp.Or(e.Time, l.now()).Unix(), Via: e.Via, Op: e.Op, Path: e.Path, Blob: e.Blob}
		if l.queries {
			r.Query = e.Query
		}
		buf = r.appendJSON(buf)
	}
	size, compacted, err := appendLocked(l.path, buf)
	if err != nil {
		return fmt.Errorf("usage log %s: %w", l.path, err)
	}
	if size > max(maxLogBytes, 2*compacted) {
		if err := l.compact(); err != nil {
			return fmt.Errorf("usage log %s: compact: %w", l.path, err)
		}
	}
	return nil
}

// appendLocked appends data to the file at path under a shared lock, and
// returns the file's size after and, when that passes maxLogBytes, its
// size after the last compaction (0 when not known). A log replaced by a
// compaction after it was opened is opened again, so that no record lands
// in the old one.
func appendLocked(path string, data []byte) (size, compacted int64, err error) {
	for range 3 {
		f, err := safefs.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
		if errors.Is(err, os.ErrNotExist) { // the first record of all
			if err = os.MkdirAll(filepath.Dir(path), 0o700); err == nil {
				f, err = safefs.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
			}
		}
		if err != nil {
			return 0, 0, err
		}
		if err := filelock.Shared(f); err != nil {
			f.Close()
			return 0, 0, err
		}
		fi, err := f.Stat()
		if err != nil {
			f.Close()
			return 0, 0, err
		}
		if now, err := os.Stat(path); err != nil || !os.SameFile(fi, now) {
			f.Close() // compacted meanwhile: append to the new log
			continue
		}
		// A record cut short (a process killed mid-write, a full disk) must
		// not swallow the next one.
		if size := fi.Size(); size > 0 {
			last := make([]byte, 1)
			if _, err := f.ReadAt(last, size-1); err == nil && last[0] != '\n' {
				data = append([]byte{'\n'}, data...)
			}
		}
		_, err = f.Write(data)
		size := fi.Size() + int64(len(data))
		if size > maxLogBytes {
			// A log only grows after its compaction: a larger figure is
			// damage, and the log is compacted.
			if c := compactedSize(f); c <= size {
				compacted = c
			}
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return size, compacted, err
	}
	return 0, 0, errors.New("the log keeps being replaced")
}

// compactedSize reads the size a compaction gave the log in f from its
// first line, or 0 when the log has no such line.
func compactedSize(f *os.File) int64 {
	var head [len(compactedPrefix) + 20]byte
	n, _ := f.ReadAt(head[:], 0)
	line, ok := bytes.CutPrefix(head[:n], []byte(compactedPrefix))
	if !ok {
		return 0
	}
	digits, _, ok := bytes.Cut(line, []byte("}"))
	v, err := strconv.ParseInt(string(digits), 10, 64)
	if !ok || err != nil || v < 0 {
		return 0
	}
	return v
}

// samePath reports whether f is still the file at path.
func samePath(f *os.File, path string) bool {
	a, err1 := f.Stat()
	b, err2 := os.Stat(path)
	return err1 == nil && err2 == nil && os.SameFile(a, b)
}

// compact rewrites the log as one summary line per document, unless
// another process is using it (then a later write compacts it).
func (l *Log) compact() error {
	f, err := safefs.OpenFile(l.path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if ok, err := filelock.TryExclusive(f); err != nil || !ok {
		return err
	}
	if !samePath(f, l.path) {
		return nil // compacted by another process
	}
	sum, err := read(f, l.now())
	if err != nil {
		return err
	}
	tmp := l.path + ".tmp"
	out, err := safefs.Create(tmp, 0o600)
	if err != nil {
		return err
	}
	cutoff := day(l.now().Add(-Window))
	var body []byte
	for _, u := range sum.sorted() {
		r := record{T: u.Last.Unix(), Path: u.Path, Blob: u.Blob, N: u.Count}
		for _, d := range u.days {
			if d[0] >= cutoff {
				r.Days = append(r.Days, d)
			}
		}
		body = r.appendJSON(body)
	}
	// The first line gives the compacted log's size, itself included,
	// so that the next compaction waits until the log has doubled.
	head := compactedHead(len(body))
	if _, err := out.Write(append(head, body...)); err != nil {
		out.Close()
		os.Remove(tmp)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, l.path)
}

// compactedHead is the first line of a compacted log whose other lines
// take n bytes: {"compacted":SIZE}, SIZE counting the line itself.
func compactedHead(n int) []byte {
	size := n + len(compactedPrefix) + 2 // the digits, "}" and "\n"
	for {
		head := fmt.Appendf(nil, "%s%d}\n", compactedPrefix, size)
		if n+len(head) == size {
			return head
		}
		size = n + len(head)
	}
}

// Use is what the log knows of one document.
type Use struct {
	Path   string
	Blob   string    // as last handed out
	Count  int       // uses in all
	Recent int       // uses within Window
	Last   time.Time // the last use
	days   [][2]int64
}

// Summary is the log read back.
type Summary struct {
	Docs map[string]*Use
	// Skipped counts lines that did not parse: a damaged log.
	Skipped int
	// Since is the time of the earliest record.
	Since time.Time
}

// Read reads the log; a log that does not exist yet is empty.
func (l *Log) Read() (*Summary, error) {
	f, err := os.Open(l.path)
	if errors.Is(err, os.ErrNotExist) {
		return &Summary{Docs: map[string]*Use{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("usage log %s: %w", l.path, err)
	}
	defer f.Close()
	return read(f, l.now())
}

// ReadFile reads the log of the artifact in artifactDir whether or not
// recording is on: kbc prune and kbq stats report what was recorded.
func ReadFile(artifactDir string, getenv func(string) string) (*Summary, string, error) {
	path, err := File(artifactDir, getenv)
	if err != nil {
		return nil, "", err
	}
	l := &Log{path: path, now: time.Now}
	sum, err := l.Read()
	return sum, path, err
}

func read(r io.Reader, now time.Time) (*Summary, error) {
	s := &Summary{Docs: map[string]*Use{}}
	recent := day(now.Add(-Window))
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.HasPrefix(line, []byte(compactedPrefix)) {
			continue // a compaction's size
		}
		var rec record
		if !parseLine(line, &rec) {
			rec = record{}
			if err := json.Unmarshal(line, &rec); err != nil {
				s.Skipped++
				continue
			}
		}
		if rec.Path == "" || rec.T <= 0 {
			s.Skipped++
			continue
		}
		t := time.Unix(rec.T, 0)
		u := s.Docs[rec.Path]
		if u == nil {
			u = &Use{Path: rec.Path}
			s.Docs[rec.Path] = u
		}
		if s.Since.IsZero() || t.Before(s.Since) {
			s.Since = t
		}
		if !t.Before(u.Last) {
			u.Last = t
			u.Blob = cmp.Or(rec.Blob, u.Blob)
		}
		if rec.N > 0 { // a summary
			u.Count += rec.N
			for _, d := range rec.Days {
				u.addDay(d[0], d[1], recent)
			}
			continue
		}
		u.Count++
		u.addDay(day(t), 1, recent)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return s, nil
}

func (u *Use) addDay(d, n, recent int64) {
	if d >= recent {
		u.Recent += int(n)
	}
	for i := range u.days {
		if u.days[i][0] == d {
			u.days[i][1] += n
			return
		}
	}
	u.days = append(u.days, [2]int64{d, n})
}

// day is the Unix day number of t.
func day(t time.Time) int64 { return t.Unix() / 86400 }

// sorted lists the documents in path order.
func (s *Summary) sorted() []*Use {
	out := make([]*Use, 0, len(s.Docs))
	for _, u := range s.Docs {
		out = append(out, u)
	}
	slices.SortFunc(out, func(a, b *Use) int { return cmp.Compare(a.Path, b.Path) })
	return out
}
