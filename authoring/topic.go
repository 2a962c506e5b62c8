package authoring

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/filelock"
	"github.com/kbqdev/kbq/internal/safefs"
	"github.com/kbqdev/kbq/knowledge"
)

// MaxTopicBytes caps a topic written through WriteTopic.
const MaxTopicBytes = 512 << 10

var (
	// ErrTopic means a topic cannot be written; the message says why.
	ErrTopic = errors.New("cannot write that topic")
	// ErrStale means the file changed since the writer read it.
	ErrStale = errors.New("changed since it was read")
)

// TopicOptions describe a topic write.
type TopicOptions struct {
	Title string
	Tags  []string
	// Blob is the git blob hash of the version the writer read; replacing
	// an existing file requires it, and it must still be the file's.
	Blob string
	// LockDir is where writers take turns (the git directory).
	LockDir string
	// Supersedes names the documents the topic replaces (topic keys or
	// memory:ID), each of which must exist in its scope or one enclosing it.
	Supersedes []string
}

var topicSegmentRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// TopicPath checks a topic key ("deploy/steps") and returns the file it
// names inside scopeDir/.kb/. Keys that leave the .kb/ directory, name
// another kind (context, memories/, articles/, attachments/) or hold
// anything but letters, digits, '.', '_' and '-' between slashes are
// refused.
func TopicPath(scopeDir, key string) (string, error) {
	key = strings.TrimSuffix(strings.TrimSpace(key), ".md")
	switch {
	case key == "":
		return "", fmt.Errorf("%w: the topic key is empty; give one such as deploy/steps", ErrTopic)
	case len(key) > 200:
		return "", fmt.Errorf("%w: the topic key is over 200 bytes", ErrTopic)
	case strings.HasPrefix(key, "/") || filepath.IsAbs(key) || strings.Contains(key, `\`):
		return "", fmt.Errorf("%w: topic key %q is a path; give a key relative to .kb/ such as deploy/steps", ErrTopic, key)
	}
	parts := strings.Split(key, "/")
	for _, p := range parts {
		if p == ".." || p == "." {
			return "", fmt.Errorf("%w: topic key %q leaves the .kb/ directory", ErrTopic, key)
		}
		if !topicSegmentRE.MatchString(p) {
			return "", fmt.Errorf("%w: topic key %q: %q may hold only letters, digits, '.', '_' and '-', and starts with a letter or digit", ErrTopic, key, p)
		}
	}
	switch {
	case key == "context":
		return "", fmt.Errorf("%w: context is the scope's always-loaded context, not a topic; edit .kb/context.md by hand", ErrTopic)
	case parts[0] == knowledge.MemoriesDir:
		return "", fmt.Errorf("%w: %s/ holds memories; write one with knowledge_remember", ErrTopic, parts[0])
	case knowledge.IsKindDir(parts[0]):
		return "", fmt.Errorf("%w: %s/ is not for topics; choose another key", ErrTopic, parts[0])
	}
	return filepath.Join(scopeDir, knowledge.Dir, filepath.FromSlash(key)+".md"), nil
}

// WriteTopic creates or replaces the topic key of the scope rooted at
// scopeDir, below root, and returns its path and whether it replaced a
// file. The content is markdown, with or without frontmatter; Title and
// Tags become frontmatter when it has none. The document is validated as
// kbc check would (secrets included) and refused with the first error. No
// directory on the way from root may be a symbolic link. The file is
// replaced atomically; a failure leaves the old one as it was.
func WriteTopic(root, scopeDir, key, content string, opts TopicOptions) (string, bool, error) {
	name, err := TopicPath(scopeDir, key)
	if err != nil {
		return "", false, err
	}
	for _, target := range opts.Supersedes {
		if !Exists(root, scopeDir, target) {
			return "", false, fmt.Errorf("%w: it supersedes %s, which is not in this scope or one enclosing it (give a topic key such as deploy/steps, or memory:ID)", ErrTopic, target)
		}
	}
	data, err := topicFile(name, content, opts)
	if err != nil {
		return "", false, err
	}
	if err := noLinks(root, filepath.Dir(name), ErrTopic); err != nil {
		return "", false, err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return "", false, writeFailed("write topic", filepath.Dir(name), err)
	}
	if err := noLinks(root, filepath.Dir(name), ErrTopic); err != nil { // created by someone else meanwhile
		return "", false, err
	}
	unlock, err := filelock.Wait(writeLockFile(opts.LockDir, filepath.Dir(name)), 10*time.Second)
	if err != nil {
		return "", false, err
	}
	defer unlock()
	replaced := false
	shown := name // as the messages show it: relative to the repository
	if rel, err := filepath.Rel(root, name); err == nil {
		shown = filepath.ToSlash(rel)
	}
	switch old, err := os.Lstat(name); {
	case err == nil && !old.Mode().IsRegular():
		return "", false, fmt.Errorf("%w: %s is not a regular file", ErrTopic, shown)
	case err == nil:
		cur, err := os.ReadFile(name)
		if err != nil {
			return "", false, fmt.Errorf("write topic: %w", err)
		}
		blob := gitsource.HashBlob(cur)
		switch {
		case opts.Blob == "":
			return "", false, fmt.Errorf("%w: %s exists (blob %s): read it first (knowledge_get returns its blob) and pass that blob to replace it", ErrStale, shown, blob)
		case opts.Blob != blob:
			return "", false, fmt.Errorf("%w: %s is now blob %s, not the %s you read: read it again, and merge your change into what it says now", ErrStale, shown, blob, opts.Blob)
		}
		replaced = true
	case errors.Is(err, os.ErrNotExist):
		if opts.Blob != "" {
			return "", false, fmt.Errorf("%w: %s no longer exists; write it again without a blob to create it", ErrStale, shown)
		}
	default:
		return "", false, fmt.Errorf("write topic: %w", err)
	}
	if err := writeAtomic(name, data); err != nil {
		return "", false, writeFailed("write topic", filepath.Dir(name), err)
	}
	return name, replaced, nil
}

// topicFile renders and validates the file's bytes.
func topicFile(name, content string, opts TopicOptions) ([]byte, error) {
	content = strings.ReplaceAll(content, "\r\n", "\n")
	switch {
	case strings.TrimSpace(content) == "":
		return nil, fmt.Errorf("%w: the content is empty", ErrTopic)
	case !utf8.ValidString(content):
		return nil, fmt.Errorf("%w: the content is not valid UTF-8", ErrTopic)
	case strings.ContainsRune(content, 0):
		return nil, fmt.Errorf("%w: the content contains a NUL byte", ErrTopic)
	case len(content) > MaxTopicBytes:
		return nil, fmt.Errorf("%w: the content is over %d KiB; split it into several topics", ErrTopic, MaxTopicBytes>>10)
	}
	var b bytes.Buffer
	hasFront := strings.HasPrefix(content, "---\n")
	var tags []string
	for _, t := range opts.Tags {
		if t = strings.TrimSpace(t); t != "" {
			tags = append(tags, t)
		}
	}
	switch args := opts.Title != "" || len(tags) > 0 || len(opts.Supersedes) > 0; {
	case hasFront && args:
		return nil, fmt.Errorf("%w: the content has frontmatter; put the title, tags and supersedes in it rather than in arguments", ErrTopic)
	case !hasFront && args:
		fm := struct {
			Title      string   `yaml:"title,omitempty"`
			Tags       []string `yaml:"tags,omitempty,flow"`
			Supersedes []string `yaml:"supersedes,omitempty,flow"`
		}{opts.Title, tags, opts.Supersedes}
		head, err := yaml.Marshal(fm)
		if err != nil {
			return nil, err
		}
		b.WriteString("---\n")
		b.Write(head)
		b.WriteString("---\n")
	}
	b.WriteString(content)
	if !strings.HasSuffix(content, "\n") {
		b.WriteByte('\n')
	}
	for _, diag := range compiler.Validate(filepath.Base(name), b.Bytes()) {
		if diag.Severity == compiler.Error {
			return nil, fmt.Errorf("%w: line %d:%d: %s", ErrTopic, diag.Line, diag.Col, diag.Message)
		}
	}
	return b.Bytes(), nil
}

// noLinks refuses dir, with the error kind, when it, or any directory between root and it, is a
// symbolic link: a write must land in the repository's own .kb/.
func noLinks(root, dir string, kind error) error {
	rel, err := filepath.Rel(root, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s is outside the repository at %s", kind, dir, root)
	}
	if err := safefs.NoLinksBelow(root, dir); err != nil {
		if errors.Is(err, safefs.ErrLink) {
			return fmt.Errorf("%w: %w; knowledge is written only into the repository's own directories", kind, err)
		}
		return err
	}
	for cur := dir; cur != root && len(cur) > len(root); cur = filepath.Dir(cur) {
		if fi, err := os.Stat(cur); err == nil && !fi.IsDir() {
			return fmt.Errorf("%w: %s is a file, not a directory", kind, cur)
		}
	}
	return nil
}

// writeLockFile is where writers of dir take turns.
func writeLockFile(lockDir, dir string) string {
	if lockDir != "" {
		return filepath.Join(lockDir, "kbq-remember.lock")
	}
	return filepath.Join(dir, ".kbq-write.lock")
}

// writeAtomic replaces name with data: a temporary file beside it, synced,
// then renamed over it.
func writeAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), ".write-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), name)
}
