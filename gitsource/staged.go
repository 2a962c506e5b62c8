package gitsource

import (
	"bytes"
	"errors"
	"fmt"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/go-git/go-billy/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/index"
)

// Staged returns the files in git's index: what the next commit will hold.
// When GIT_INDEX_FILE is set, as git sets it for hooks during
// "git commit -a" or "git commit PATH", that file is read instead.
//
// go-git cannot decode a split index (core.splitIndex) or a sparse index
// (index.sparse); for those Staged falls back to "git ls-files --stage",
// and says so in the error if git is not installed.
func (r *Repo) Staged() (Snapshot, error) {
	if r.root == "" {
		return nil, fmt.Errorf("read index: %w", ErrNoWorktree)
	}
	entries, err := r.indexEntries()
	if err != nil {
		return nil, err
	}
	head, err := r.Head()
	if err != nil {
		return nil, err
	}
	info := Info{Mode: "staged"}
	if !head.IsZero() {
		info.Commit = head.String()
	}
	return &stagedSnapshot{repo: r, files: entries, info: info}, nil
}

// indexFile returns the path of the index git would use, honouring
// GIT_INDEX_FILE, or "" for the repository's own index.
func indexFile() string {
	p := os.Getenv("GIT_INDEX_FILE")
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return p
}

func (r *Repo) indexEntries() ([]File, error) {
	idx, err := r.decodeIndex()
	if errors.Is(err, index.ErrUnknownExtension) {
		return r.lsFiles()
	}
	if err != nil {
		return nil, err
	}
	files := make([]File, 0, len(idx.Entries))
	for _, e := range idx.Entries {
		if e.IntentToAdd {
			continue
		}
		f := File{Path: e.Name, Blob: e.Hash.String()}
		if e.Stage != mergedStage {
			if n := len(files); n > 0 && files[n-1].Path == e.Name {
				continue
			}
			f.Kind, f.Blob = Unmerged, ""
			files = append(files, f)
			continue
		}
		kind, err := kindOfMode(e.Mode)
		if err != nil {
			return nil, fmt.Errorf("index entry %s: %w", e.Name, err)
		}
		f.Kind = kind
		files = append(files, f)
	}
	return files, nil
}

// indexMemo is the last index decoded, with the stat data of its file: a
// build asks for the index several times (the stat cache, the base for the
// dirty check), and decoding one of 100,000 entries takes tens of
// milliseconds. Callers treat the decoded index as read-only.
type indexMemo struct {
	mu    sync.Mutex
	stamp string // size and modification time of the file decoded
	idx   *index.Index
	err   error
}

// indexInfo stats the index file git uses: GIT_INDEX_FILE, or the
// repository's own.
func (r *Repo) indexInfo() (os.FileInfo, error) {
	if path := indexFile(); path != "" {
		return os.Stat(path)
	}
	if r.gitDir == nil {
		return nil, os.ErrNotExist
	}
	return r.gitDir.Stat("index")
}

// forget drops the decoded index; the next read decodes the file again.
func (m *indexMemo) forget() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.stamp, m.idx, m.err = "", nil, nil
}

func (r *Repo) decodeIndex() (*index.Index, error) {
	stamp := ""
	if fi, err := r.indexInfo(); err == nil {
		stamp = fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
	}
	r.index.mu.Lock()
	defer r.index.mu.Unlock()
	if stamp != "" && stamp == r.index.stamp {
		return r.index.idx, r.index.err
	}
	idx, err := r.readIndex()
	r.index.stamp, r.index.idx, r.index.err = stamp, idx, err
	return idx, err
}

func (r *Repo) readIndex() (*index.Index, error) {
	path := indexFile()
	if path == "" {
		if r.gitDir == nil {
			return nil, fmt.Errorf("read git index: %w", os.ErrNotExist)
		}
		f, err := r.gitDir.Open("index")
		if errors.Is(err, os.ErrNotExist) {
			return &index.Index{Version: 2}, nil // no index yet: nothing staged
		}
		if err != nil {
			return nil, fmt.Errorf("read git index: %w", err)
		}
		defer f.Close()
		data, err := readAll(r.gitDir, "index", f)
		if err != nil {
			return nil, fmt.Errorf("read git index: %w", err)
		}
		idx, err := parseIndex(data)
		if err != nil && !errors.Is(err, index.ErrUnknownExtension) {
			return nil, fmt.Errorf("read git index: %w", err)
		}
		return idx, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read GIT_INDEX_FILE: %w", err)
	}
	idx, err := parseIndex(data)
	if err != nil && !errors.Is(err, index.ErrUnknownExtension) {
		return nil, fmt.Errorf("read GIT_INDEX_FILE %s: %w", path, err)
	}
	return idx, err
}

// readAll reads f into a buffer of its size: growing one as io.ReadAll
// does touches three times the memory.
func readAll(fs billy.Filesystem, name string, f billy.File) ([]byte, error) {
	// The file billy opens does not say its size; the file system does.
	// Grown by io.ReadAll, a 12,000-entry index cost an incremental build
	// 30 ms of copies and fresh pages.
	size := int64(512)
	if fi, err := fs.Stat(name); err == nil {
		size += fi.Size()
	}
	return readAllInto(make([]byte, 0, size), f)
}

// treeFromIndex returns git's index when its cache tree records that the
// index holds exactly tree, as it does after a commit, checkout or reset:
// its entries list the tree without a tree object read. It returns nil
// when the index cannot vouch for tree.
func (r *Repo) treeFromIndex(tree plumbing.Hash) *index.Index {
	idx, err := r.decodeIndex()
	if err != nil || idx.Cache == nil || len(idx.Cache.Entries) == 0 {
		return nil
	}
	// An invalidated tree is left out of the decoded cache, so a first
	// entry with a path is a subtree: the root is not valid.
	root := idx.Cache.Entries[0]
	if root.Path != "" || root.Hash != tree || root.Entries != len(idx.Entries) {
		return nil
	}
	for _, e := range idx.Entries {
		if _, err := kindOfMode(e.Mode); err != nil || e.Stage != mergedStage || e.IntentToAdd {
			return nil
		}
	}
	return idx
}

func kindOfMode(m filemode.FileMode) (Kind, error) {
	switch m {
	case filemode.Regular, filemode.Deprecated:
		return Regular, nil
	case filemode.Executable:
		return Executable, nil
	case filemode.Symlink:
		return Symlink, nil
	case filemode.Submodule:
		return Submodule, nil
	}
	return 0, fmt.Errorf("unexpected mode %v", m)
}

// lsFiles lists the index with the git CLI, for index formats go-git cannot
// decode.
func (r *Repo) lsFiles() ([]File, error) {
	feature := r.indexFeature()
	gitBin, err := exec.LookPath("git")
	if err != nil {
		return nil, fmt.Errorf("%w: the index uses %s, which go-git cannot read, and git is not installed to read it instead (turn it off with: git config %s false && git update-index --no-split-index)",
			ErrUnsupported, feature, strings.Fields(feature)[0])
	}
	cmd := exec.Command(gitBin, "ls-files", "--stage", "-z")
	cmd.Dir = r.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files (reading an index with %s): %w: %s", feature, err, strings.TrimSpace(stderr.String()))
	}
	var files []File
	for _, rec := range bytes.Split(out, []byte{0}) {
		if len(rec) == 0 {
			continue
		}
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		fields := strings.Fields(string(meta))
		if !ok || len(fields) != 3 {
			return nil, fmt.Errorf("git ls-files: unexpected line %q", rec)
		}
		f := File{Path: string(path), Blob: fields[1]}
		if fields[2] != "0" {
			if n := len(files); n > 0 && files[n-1].Path == f.Path {
				continue
			}
			f.Kind, f.Blob = Unmerged, ""
			files = append(files, f)
			continue
		}
		mode, err := filemode.New(fields[0])
		if err != nil {
			return nil, fmt.Errorf("git ls-files: %s: %w", path, err)
		}
		if f.Kind, err = kindOfMode(mode); err != nil {
			return nil, fmt.Errorf("git ls-files: %s: %w", path, err)
		}
		files = append(files, f)
	}
	return files, nil
}

// indexFeature names the configuration that made the index unreadable.
func (r *Repo) indexFeature() string {
	cfg, err := r.git.Config()
	if err == nil && cfg.Raw != nil {
		if v := cfg.Raw.Section("index").Option("sparse"); strings.EqualFold(v, "true") {
			return "index.sparse (a sparse index)"
		}
		if v := cfg.Raw.Section("core").Option("splitIndex"); strings.EqualFold(v, "true") {
			return "core.splitIndex (a split index)"
		}
	}
	return "core.splitIndex or index.sparse (an index extension)"
}

type stagedSnapshot struct {
	repo  *Repo
	files []File
	info  Info
}

func (s *stagedSnapshot) Info() Info { return s.info }

func (s *stagedSnapshot) Files() iter.Seq2[File, error] {
	return func(yield func(File, error) bool) {
		for _, f := range s.files {
			if !yield(f, nil) {
				return
			}
		}
	}
}

func (s *stagedSnapshot) Read(f File, max int64) ([]byte, error) {
	return s.repo.readBlob(f, max)
}

// mergedStage is the stage of an index entry without conflicts. go-git's
// index.Merged constant is 1, the stage of a conflict's common ancestor;
// its decoder gives merged entries stage 0, as git writes them.
const mergedStage index.Stage = 0
