package compiler_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/filelock"
	"github.com/kbqdev/kbq/internal/testkb"
)

func sampleFiles(n int) testkb.Files {
	files := testkb.Files{
		".kb/context.md":             "Project context.\n",
		".kb/memories/001-a.md":      "---\nid: 1\ncreated: 2024-05-01T10:00:00Z\n---\nRemember a.\n",
		"services/api/.kb/deploy.md": "# Deploy\n\nWith helm.\n",
		".kb/deploy.md":              "# Deploy\n\nWith make.\n",
	}
	for i := range n {
		var b strings.Builder
		fmt.Fprintf(&b, "---\ntitle: Topic %d\ntags: [t%d]\n---\n# Topic %d\n\n", i, i%7, i)
		for j := range 20 {
			fmt.Fprintf(&b, "## Section %d\n\n", j)
			for range 3 {
				fmt.Fprintf(&b, "Word%d appears with common words in paragraph %d of topic %d.\n", i*j, j, i)
			}
			b.WriteString("\n")
		}
		files[fmt.Sprintf(".kb/topics/t%04d.md", i)] = b.String()
	}
	return files
}

// readTree returns every file below dir.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := make(map[string][]byte)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		out[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, a, b map[string][]byte) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%d files vs %d files", len(a), len(b))
	}
	for name, data := range a {
		if !bytes.Equal(data, b[name]) {
			t.Errorf("%s differs", name)
		}
	}
}

func TestBuildIsReproducible(t *testing.T) {
	files := sampleFiles(1000)
	a, b := t.TempDir(), t.TempDir()
	testkb.BuildInto(t, a, files, nil)
	testkb.BuildInto(t, b, files, nil)
	ta, tb := readTree(t, a), readTree(t, b)
	sameTree(t, ta, tb)
	var segments []string
	for name := range ta {
		if strings.HasSuffix(name, ".seg") {
			segments = append(segments, path.Base(name))
		}
	}
	// The sample needs several batches, which the build merges into one.
	if len(segments) != 1 || segments[0] == "000000000001.seg" {
		t.Errorf("segments %v; want one, merged from several batches", segments)
	}
}

// kbc writes its segments as ice would, to the byte: every kind of
// document, field and term a repository gives, in one segment (300
// topics) and in segments then merged (1,000).
func TestBuildWritesSegmentsAsIce(t *testing.T) {
	for _, n := range []int{300, 1000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testBuildWritesSegmentsAsIce(t, n) })
	}
}

func testBuildWritesSegmentsAsIce(t *testing.T, n int) {
	files := sampleFiles(n)
	files[".kb/decisions/adr-1.md"] = "---\ntitle: ADR\nkind: decision\nimportance: 0.8\nsource: https://example.com/adr\nowner: platform\ntags: [arch, db]\n---\n# Use Postgres\n\n" + strings.Repeat("Because rows. ", 400) + "\n"
	files["services/api/.kb/notes/empty.md"] = "---\ntitle: Empty\n---\n"
	files[".kb/notes/é ü.md"] = "# Ünïcode\n\nDéjà vu.\n\n```go\nfunc f() {}\n```\n"
	ours, theirs := t.TempDir(), t.TempDir()
	testkb.BuildInto(t, ours, files, nil)
	restore := compiler.WriteSegmentsWithIce()
	testkb.BuildInto(t, theirs, files, nil)
	restore()
	sameTree(t, readTree(t, theirs), readTree(t, ours))
}

// A full build that keeps none of its batches' ice parts, or stops keeping
// them part way, merges its segments as a larger build does: the artifact
// is the one the joined parts make, the segment aside, which holds the
// same chunks, stored fields and keyword postings.
func TestKeptPartsBuildAsMerged(t *testing.T) {
	files := sampleFiles(300) // 1,204 chunks: three batches of up to 512
	joined := t.TempDir()
	testkb.BuildInto(t, joined, files, nil)
	want := readTree(t, joined)
	for _, limit := range []int{0, 1000} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			restore := compiler.KeepPartsUpTo(limit)
			dir := t.TempDir()
			testkb.BuildInto(t, dir, files, nil)
			restore()
			got := readTree(t, dir)
			if len(got) != len(want) {
				t.Fatalf("%d files, joined %d", len(got), len(want))
			}
			segs := 0
			for name, data := range want {
				other, ok := got[name]
				switch {
				case !ok:
					t.Fatalf("no %s", name)
				case strings.HasSuffix(name, ".seg"):
					if bytes.Equal(data, other) {
						t.Fatalf("%s: ice's merge wrote the bytes the join wrote; was there one batch?", name)
					}
					compiler.SameSegments(t, data, other)
					segs++
				case !bytes.Equal(data, other):
					t.Errorf("%s differs", name)
				}
			}
			if segs != 1 {
				t.Fatalf("%d segments, want one", segs)
			}
		})
	}
}

func TestBuildFailureKeepsArtifact(t *testing.T) {
	dir := t.TempDir()
	files := sampleFiles(10)
	testkb.BuildInto(t, dir, files, nil)
	before := readTree(t, dir)

	files[".kb/broken.md"] = "---\ntitle: [oops\n---\n"
	res, err := compiler.Build(context.Background(), files, compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt})
	if !errors.Is(err, compiler.ErrInvalid) {
		t.Fatalf("err = %v, want ErrInvalid", err)
	}
	if res.Diagnostics.Errors() != 1 || res.Diagnostics[0].Path != ".kb/broken.md" {
		t.Errorf("diagnostics = %v", res.Diagnostics)
	}
	sameTree(t, before, readTree(t, dir))
}

// cancelingSource cancels a build after some reads, as if it were killed.
type cancelingSource struct {
	files  testkb.Files
	after  int32
	reads  atomic.Int32
	cancel context.CancelFunc
}

func (s *cancelingSource) Read(f gitsource.File, max int64) ([]byte, error) {
	if s.reads.Add(1) == s.after {
		s.cancel()
	}
	return s.files.Read(f, max)
}

func (s *cancelingSource) Files() iter.Seq2[gitsource.File, error] { return s.files.Files() }

func TestBuildCanceledKeepsArtifact(t *testing.T) {
	dir := t.TempDir()
	testkb.BuildInto(t, dir, sampleFiles(10), nil)
	before := readTree(t, dir)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &cancelingSource{files: sampleFiles(500), after: 100, cancel: cancel}
	_, err := compiler.Build(ctx, src, compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	sameTree(t, before, readTree(t, dir))
}

func TestBuildManifest(t *testing.T) {
	dir := t.TempDir()
	res := testkb.BuildInto(t, dir, sampleFiles(3), testkb.Files{"deploy.md": "# Deploy\n\nMy way.\n"})
	m, err := artifact.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.Counts.Documents != 8 || res.Indexed != 8 {
		t.Errorf("documents = %d (indexed %d), want 8", m.Counts.Documents, res.Indexed)
	}
	if m.Counts.ByScope["global"] != 1 || m.Counts.ByScope["services/api"] != 1 || m.Counts.ByKind["memory"] != 1 {
		t.Errorf("counts = %+v", m.Counts)
	}
	if !m.Global.Included || len(m.Global.Hash) != 64 {
		t.Errorf("global = %+v", m.Global)
	}
	shadowed := map[string][]string{}
	for _, d := range m.Documents {
		if len(d.ShadowedBy) > 0 {
			shadowed[d.Path] = d.ShadowedBy
		}
	}
	want := map[string][]string{
		"global:deploy.md": {"project", "services/api"},
		".kb/deploy.md":    {"services/api"},
	}
	if fmt.Sprint(shadowed) != fmt.Sprint(want) {
		t.Errorf("shadowing = %v, want %v", shadowed, want)
	}
	var chunks int
	var body artifact.FieldStats
	for _, d := range m.Documents {
		chunks += d.Chunks
		body = body.Add(d.Fields.Get(artifact.FieldBody))
	}
	if chunks != m.Counts.Chunks || body != m.Fields[artifact.FieldBody] {
		t.Errorf("document totals %d chunks, %+v; manifest %d, %+v", chunks, body, m.Counts.Chunks, m.Fields[artifact.FieldBody])
	}
}

// watchedSource records whether a build has listed it.
type watchedSource struct {
	files  testkb.Files
	listed atomic.Bool
}

func (s *watchedSource) Files() iter.Seq2[gitsource.File, error] {
	s.listed.Store(true)
	return s.files.Files()
}

func (s *watchedSource) Read(f gitsource.File, max int64) ([]byte, error) {
	return s.files.Read(f, max)
}

// A build reads its source only once it holds the artifact's lock: two
// builds of a working tree that changes between them (two agents
// remembering at once) must publish the later view last, whichever started
// first.
func TestBuildListsAfterTakingTheLock(t *testing.T) {
	dir := t.TempDir()
	testkb.BuildInto(t, dir, sampleFiles(2), nil)
	held, err := filelock.Wait(filepath.Join(dir, ".lock"), time.Second)
	if err != nil {
		t.Fatal(err)
	}
	src := &watchedSource{files: sampleFiles(3)}
	done := make(chan error, 1)
	go func() {
		_, err := compiler.Build(context.Background(), src, compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond)
	if src.listed.Load() {
		t.Error("the build listed its source before it held the lock")
	}
	held()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !src.listed.Load() {
		t.Error("the build never listed its source")
	}
}

// TestIncrementalBuildsMergeSegments adds one document a build: each
// build adds a small segment, and once a few pile up they are merged, so
// the count stays bounded, and the artifact answers as a full build's.
func TestIncrementalBuildsMergeSegments(t *testing.T) {
	// Every merge releases its mapped inputs' pages, as large ones do,
	// and as often as it can: what it reads after must still be there.
	defer compiler.ReleaseMergesEvery(10 * time.Microsecond)()
	// The heap gets less memory while large merges run, and its limit
	// back after.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(1 << 30))
	files := sampleFiles(1000)
	dir := t.TempDir()
	testkb.BuildInto(t, dir, files, nil)
	most := 0
	for i := range 12 {
		files[fmt.Sprintf(".kb/notes/n%02d.md", i)] = fmt.Sprintf("# Note %d\n\nA note.\n", i)
		if res := testkb.BuildInto(t, dir, files, nil); !res.Incremental {
			t.Fatalf("build %d was not incremental: %s", i, res.FullReason)
		}
		m, err := artifact.ReadHeader(dir)
		if err != nil {
			t.Fatal(err)
		}
		segments := 0
		for name := range readTree(t, filepath.Join(dir, m.Index)) {
			if strings.HasSuffix(name, ".seg") {
				segments++
			}
		}
		most = max(most, segments)
	}
	if limit := debug.SetMemoryLimit(-1); limit != 1<<30 {
		t.Errorf("memory limit %d after the builds, want it restored to %d", limit, 1<<30)
	}
	const bound = 5 // the full build's segment and four small ones
	if most > bound {
		t.Errorf("%d segments after incremental builds; merges should keep them at %d or fewer", most, bound)
	}
	full := t.TempDir()
	testkb.BuildInto(t, full, files, nil)
	a, err := artifact.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Read(full)
	if err != nil {
		t.Fatal(err)
	}
	if a.Counts.Chunks != b.Counts.Chunks || len(a.Documents) != len(b.Documents) {
		t.Errorf("incremental: %d documents %d chunks; full: %d and %d", len(a.Documents), a.Counts.Chunks, len(b.Documents), b.Counts.Chunks)
	}
}

// A build cancelled midway (Ctrl-C) returns the context's error, removes
// what it wrote, and leaves the previous artifact as it was.
func TestCancelledBuildLeavesThePreviousArtifact(t *testing.T) {
	dir := t.TempDir()
	testkb.BuildInto(t, dir, sampleFiles(50), nil)
	before, err := artifact.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	files := sampleFiles(400)
	_, err = compiler.Build(ctx, files, compiler.BuildOptions{Out: dir, BuiltAt: testkb.BuiltAt, Full: true,
		Progress: func(done, total int) {
			if done == total/2 {
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled build returned %v", err)
	}
	after, err := artifact.Read(dir)
	if err != nil || after.Index != before.Index || len(after.Documents) != len(before.Documents) {
		t.Fatalf("the previous artifact changed: %v", err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "tmp-index-") {
			t.Errorf("the cancelled build left %s", e.Name())
		}
	}
}

// A build from nothing keeps only the facts the checks between documents
// look at; among many plain topics, each check still sees its documents:
// a memory id used twice, a missing attachment, a context over its
// budget, a supersession of nothing and a deprecated topic superseded.
func TestChecksBetweenDocumentsAmongTopics(t *testing.T) {
	files := sampleFiles(40)
	files[".kb/memories/002-b.md"] = "---\nid: 1\ncreated: 2024-05-02T10:00:00Z\n---\nRemember b.\n"
	files[".kb/articles/spec.md"] = "---\nsource: https://example.com/spec\nfetched: 2024-05-01\nattachment: ./attachments/spec.pdf\n---\n# Spec\n"
	files["services/api/.kb/context.md"] = "# API\n\n" + strings.Repeat("A line of context that agents load. ", 300) + "\n"
	files[".kb/topics/new.md"] = "---\nsupersedes: [topics/nosuch]\n---\n# New\n"
	files[".kb/topics/t0001.md"] = "---\nstatus: deprecated\n---\n# Old\n"
	files[".kb/topics/t0002.md"] = "---\nsupersedes: [topics/t0001]\n---\n# Replacement\n"
	res, err := compiler.Build(context.Background(), files, compiler.BuildOptions{Out: t.TempDir(), KeepGoing: true, BuiltAt: testkb.BuiltAt})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	all := strings.Join(got, "\n")
	for _, want := range []string{
		".kb/memories/002-b.md:2:5: warning: duplicate memory id 1",
		".kb/articles/spec.md:4:13: warning: attachment attachments/spec.pdf does not exist",
		"services/api/.kb/context.md:1:1: warning: context of scope services/api is",
		".kb/topics/new.md:2:14: warning: supersedes: no document is topics/nosuch",
	} {
		if !strings.Contains(all, want) {
			t.Errorf("no %q in\n%s", want, all)
		}
	}
	if strings.Contains(all, "t0002") {
		t.Errorf("a valid supersession reported:\n%s", all)
	}
	for _, d := range res.Manifest.Documents {
		switch d.Path {
		case ".kb/memories/002-b.md", ".kb/articles/spec.md", ".kb/topics/new.md":
			t.Errorf("%s, in error, was indexed (--keep-going leaves it out)", d.Path)
		}
	}
}
