package authoring

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	"golang.org/x/text/unicode/norm"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/internal/filelock"
	"github.com/kbqdev/kbq/knowledge"
)

// MaxMemoryBytes caps the text of a memory; longer knowledge belongs in a
// topic.
const MaxMemoryBytes = 64 << 10

var (
	// ErrMemoryText means the text cannot be a memory; the message says why.
	ErrMemoryText = errors.New("cannot remember that")
	// ErrNoMemory means forget found no such memory.
	ErrNoMemory = errors.New("no such memory")
	// ErrNotMemory means forget was asked to remove a file that is not a
	// memory.
	ErrNotMemory = errors.New("not a memory")
)

// MemoryOptions describe a new memory.
type MemoryOptions struct {
	Tags   []string
	Source string // "user-told" when empty
	Now    time.Time
	// LockDir is where concurrent remembers take turns (the git directory);
	// when empty, a lock file in the system's temporary directory.
	LockDir string
	// Root, when set, is the repository's working tree: no directory
	// between it and the memories directory may be a symbolic link.
	Root string
	// Supersedes names the documents the memory replaces: topic keys or
	// memory:ID, each of which must exist in the scope or one enclosing
	// it. Search and context leave them out once it is built.
	Supersedes []string
	// Contradicts names the documents the memory disputes, as Supersedes
	// does; both stay searchable, marked disputed.
	Contradicts []string
}

// Remember writes text as a new memory of the scope rooted at scopeDir,
// in scopeDir/.kb/memories/NNN-slug.md, and returns the file's path. The id
// is one more than the largest in the directory, by frontmatter or file
// name. Concurrent calls never write the same id or file, and a failure
// leaves nothing behind.
func Remember(scopeDir, text string, opts MemoryOptions) (string, error) {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	switch {
	case text == "":
		return "", fmt.Errorf("%w: the text is empty", ErrMemoryText)
	case !utf8.ValidString(text):
		return "", fmt.Errorf("%w: the text is not valid UTF-8", ErrMemoryText)
	case strings.ContainsRune(text, 0):
		return "", fmt.Errorf("%w: the text contains a NUL byte", ErrMemoryText)
	case len(text) > MaxMemoryBytes:
		return "", fmt.Errorf("%w: the text is over %d KiB, the most a memory may hold (write a topic instead)", ErrMemoryText, MaxMemoryBytes>>10)
	}
	kb := filepath.Join(scopeDir, knowledge.Dir)
	if fi, err := os.Stat(kb); err == nil && !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is a file, not a directory", ErrMemoryText, kb)
	}
	dir := filepath.Join(kb, knowledge.MemoriesDir)
	if opts.Root != "" {
		if err := noLinks(opts.Root, dir, ErrMemoryText); err != nil {
			return "", err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", writeFailed("write memory", kb, err)
	}
	if opts.Source == "" {
		opts.Source = "user-told"
	}
	for _, target := range opts.Supersedes {
		if !Exists(opts.Root, scopeDir, target) {
			return "", fmt.Errorf("%w: it supersedes %s, which is not in this scope or one enclosing it (give a topic key such as deploy/steps, or memory:ID)", ErrMemoryText, target)
		}
	}
	for _, target := range opts.Contradicts {
		if !Exists(opts.Root, scopeDir, target) {
			return "", fmt.Errorf("%w: it contradicts %s, which is not in this scope or one enclosing it (give a topic key such as deploy/steps, or memory:ID)", ErrMemoryText, target)
		}
	}
	if opts.Now.IsZero() {
		opts.Now = time.Now()
	}
	lockFile := filepath.Join(opts.LockDir, "kbq-remember.lock")
	if opts.LockDir == "" {
		abs, _ := filepath.Abs(dir)
		sum := sha256.Sum256([]byte(abs))
		lockFile = filepath.Join(os.TempDir(), "kbq-remember-"+hex.EncodeToString(sum[:8])+".lock")
	}
	unlock, err := filelock.Wait(lockFile, 10*time.Second)
	if err != nil {
		return "", err
	}
	defer unlock()

	id, err := maxMemoryID(dir)
	if err != nil {
		return "", err
	}
	id++
	content, err := memoryFile(id, text, opts)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(dir, ".remember-*")
	if err != nil {
		return "", writeFailed("write memory", dir, err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(content); err != nil {
		tmp.Close()
		return "", writeFailed("write memory", dir, err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return "", writeFailed("write memory", dir, err)
	}
	if err := tmp.Close(); err != nil {
		return "", writeFailed("write memory", dir, err)
	}
	slug := Slug(text)
	for range 1000 {
		name := filepath.Join(dir, knowledge.MemoryName(id, slug))
		// A hard link is created atomically and never replaces a file: a
		// memory appears whole or not at all.
		err := os.Link(tmp.Name(), name)
		if err == nil {
			return name, nil
		}
		if !errors.Is(err, os.ErrExist) {
			return "", writeFailed("write memory", dir, err)
		}
		// A file someone made by hand has the name; take the next id.
		id++
		if content, err = memoryFile(id, text, opts); err != nil {
			return "", err
		}
		if err := os.WriteFile(tmp.Name(), content, 0o644); err != nil {
			return "", writeFailed("write memory", dir, err)
		}
	}
	return "", fmt.Errorf("write memory: no free id in %s", dir)
}

// memoryFile renders a memory and checks that it validates.
func memoryFile(id int, text string, opts MemoryOptions) ([]byte, error) {
	var tags []string
	for _, t := range opts.Tags {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	fm := struct {
		ID          int       `yaml:"id"`
		Created     time.Time `yaml:"created"`
		Tags        []string  `yaml:"tags,omitempty,flow"`
		Source      string    `yaml:"source"`
		Supersedes  []string  `yaml:"supersedes,omitempty,flow"`
		Contradicts []string  `yaml:"contradicts,omitempty,flow"`
	}{id, opts.Now.Truncate(time.Second), tags, opts.Source, opts.Supersedes, opts.Contradicts}
	head, err := yaml.Marshal(fm)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.WriteString("---\n")
	b.Write(head)
	b.WriteString("---\n")
	b.WriteString(text)
	b.WriteString("\n")
	name := knowledge.MemoryName(id, Slug(text))
	for _, d := range compiler.Validate("memories/"+name, b.Bytes()) {
		if d.Severity == compiler.Error {
			return nil, fmt.Errorf("%w: %s", ErrMemoryText, d.Message)
		}
	}
	return b.Bytes(), nil
}

// maxMemoryID returns the largest memory id in dir, reading both file
// names and frontmatter ids, so that hand-made files never collide.
func maxMemoryID(dir string) (int, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", dir, err)
	}
	top := 0
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !knowledge.IsMarkdown(name) {
			continue
		}
		if n, ok := knowledge.MemoryNameID(name); ok {
			top = max(top, n)
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0, fmt.Errorf("read %s: %w", name, err)
		}
		if n, ok := knowledge.MemoryID(data); ok {
			top = max(top, n)
		}
	}
	return top, nil
}

// Slug turns the first 50 characters of text into lowercase ASCII words
// joined by hyphens: "Use retries (with backoff)!" → "use-retries-with-backoff".
// It is never empty and never holds a path separator or "..".
func Slug(text string) string {
	runes := []rune(text)
	if len(runes) > 50 {
		// The first 50 characters, cut between words: a word that would
		// be cut is left out, unless it is the only one.
		cut := 50
		if isWordRune(runes[50]) {
			for cut > 0 && isWordRune(runes[cut-1]) {
				cut--
			}
			if cut == 0 {
				cut = 50
			}
		}
		runes = runes[:cut]
	}
	var b strings.Builder
	sep := false
	for _, r := range norm.NFD.String(latinFold.Replace(string(runes))) {
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)):
			if sep && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
			sep = false
		case unicode.Is(unicode.Mn, r):
			// accents: "café" becomes "cafe"
		default:
			sep = true
		}
	}
	if b.Len() == 0 {
		return "memory"
	}
	return b.String()
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// latinFold spells out Latin letters that Unicode does not decompose into
// an ASCII letter and a mark.
var latinFold = strings.NewReplacer("ø", "o", "Ø", "O", "ß", "ss", "æ", "ae", "Æ", "AE", "œ", "oe", "Œ", "OE",
	"ł", "l", "Ł", "L", "đ", "d", "Đ", "D", "þ", "th", "Þ", "TH", "ð", "d", "ı", "i")

// Exists reports whether the knowledge ref names (a topic key, or
// memory:ID) is in the working tree, in the scope rooted at scopeDir or a
// scope enclosing it up to root (or in the scope alone, without root).
func Exists(root, scopeDir, ref string) bool {
	idText, memory := strings.CutPrefix(strings.TrimSpace(ref), "memory:")
	for d := scopeDir; ; d = filepath.Dir(d) {
		kb := filepath.Join(d, knowledge.Dir)
		if memory {
			if id, err := strconv.Atoi(idText); err == nil && id > 0 {
				if _, err := findMemory(filepath.Join(kb, knowledge.MemoriesDir), id); err == nil {
					return true
				}
			}
		} else {
			key := strings.TrimSuffix(strings.Trim(ref, "/ "), ".md")
			for _, ext := range []string{".md", ".txt", ".html", ".htm"} {
				if fi, err := os.Stat(filepath.Join(kb, filepath.FromSlash(key)+ext)); err == nil && fi.Mode().IsRegular() {
					return true
				}
			}
		}
		if root == "" || d == root || len(d) <= len(root) || filepath.Dir(d) == d {
			return false
		}
	}
}

// ScopeDir returns the directory of the deepest scope containing dir: the
// nearest directory at or above dir, up to root, that holds a .kb/
// directory; root when none does. Writes made from dir go there.
func ScopeDir(root, dir string) string {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return root
	}
	for d := dir; ; d = filepath.Dir(d) {
		if fi, err := os.Lstat(filepath.Join(d, knowledge.Dir)); err == nil && fi.IsDir() {
			return d
		}
		if d == root || filepath.Dir(d) == d {
			return root
		}
	}
}

// Forget removes the memory ref names: a path to a file inside a
// .kb/memories/ directory, or an id of the memories of the scope rooted at
// scopeDir. An id that scope lacks is refused, naming the file of an
// enclosing scope (up to root) that has it, so that a memory is never
// removed from another scope by mistake. It returns the removed file's
// path.
func Forget(root, scopeDir, ref string) (string, error) {
	if id, err := strconv.Atoi(ref); err == nil {
		dir := filepath.Join(scopeDir, knowledge.Dir, knowledge.MemoriesDir)
		path, err := findMemory(dir, id)
		if errors.Is(err, ErrNoMemory) {
			if other := enclosingMemory(root, scopeDir, id); other != "" {
				return "", fmt.Errorf("%w: no memory has id %d in %s; the enclosing scope's %s has it: forget it by that path, or with --dir", ErrNoMemory, id, dir, other)
			}
		}
		if err != nil {
			return "", err
		}
		return path, removeMemory(path)
	}
	abs, err := filepath.Abs(ref)
	if err != nil {
		return "", err
	}
	slash := filepath.ToSlash(abs)
	if filepath.Base(filepath.Dir(abs)) != knowledge.MemoriesDir || filepath.Base(filepath.Dir(filepath.Dir(abs))) != knowledge.Dir ||
		!knowledge.IsMarkdown(slash) {
		return "", fmt.Errorf("%w: %s is not in a .kb/memories/ directory; kbc forget only removes memories", ErrNotMemory, ref)
	}
	fi, err := os.Lstat(abs)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %s does not exist", ErrNoMemory, ref)
	}
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%w: %s is not a regular file", ErrNotMemory, ref)
	}
	return abs, removeMemory(abs)
}

func removeMemory(path string) error {
	if err := os.Remove(path); err != nil {
		return writeFailed("forget", filepath.Dir(path), err)
	}
	return nil
}

// writeFailed explains a failed write into dir: a directory that cannot be
// written is named, with what to do, rather than a temporary file in it.
func writeFailed(what, dir string, err error) error {
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, syscall.EROFS) {
		reason := err
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			reason = pe.Err
		}
		return fmt.Errorf("%s: %s is not writable (%w): make it writable, or work in a clone you can change", what, dir, reason)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// enclosingMemory returns the file of memory id in the nearest scope above
// scopeDir, up to root, that has one, or "".
func enclosingMemory(root, scopeDir string, id int) string {
	for d := scopeDir; d != root && filepath.Dir(d) != d; {
		d = filepath.Dir(d)
		if path, err := findMemory(filepath.Join(d, knowledge.Dir, knowledge.MemoriesDir), id); err == nil {
			return path
		}
		if rel, err := filepath.Rel(root, d); err != nil || strings.HasPrefix(rel, "..") {
			return ""
		}
	}
	return ""
}

// findMemory returns the file of memory id in dir. Two files with the id
// are an error naming both.
func findMemory(dir string, id int) (string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("%w: %s does not exist", ErrNoMemory, dir)
	}
	if err != nil {
		return "", err
	}
	var byName, byID string
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !knowledge.IsMarkdown(name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return "", err
		}
		if n, ok := knowledge.MemoryID(data); ok {
			if n == id {
				if byID != "" {
					return "", fmt.Errorf("%w: memory id %d is used by both %s and %s: forget one of them by path", ErrNotMemory, id, byID, filepath.Join(dir, name))
				}
				byID = filepath.Join(dir, name)
			}
			continue
		}
		if n, ok := knowledge.MemoryNameID(name); ok && n == id && byName == "" {
			byName = filepath.Join(dir, name)
		}
	}
	if byID != "" {
		return byID, nil
	}
	if byName != "" {
		return byName, nil
	}
	return "", fmt.Errorf("%w: no memory has id %d in %s (kbq list --kind memory shows them)", ErrNoMemory, id, dir)
}
