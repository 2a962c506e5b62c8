package query_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/testreq"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

var (
	diffSteps = flag.Int("diff.steps", 40, "operations of the differential test of incremental builds")
	diffSeed  = flag.Uint64("diff.seed", 0, "seed of the differential test (0: a few fixed seeds)")
)

// TestDifferentialIncremental applies random sequences of operations to a
// git repository and its global scope — adding, editing, deleting,
// renaming and moving documents between scopes, breaking and fixing
// frontmatter, growing files over the size cap, switching between --rev,
// --staged and --worktree and in and out of the global scope, and
// cancelling builds part-way — and after every step checks that the
// incrementally updated artifact answers searches, list, get of every
// document and stats exactly as a build from nothing of the same source.
//
// go test ./query -run Differential -diff.steps 500 -diff.seed 7 runs a
// longer sequence.
func TestDifferentialIncremental(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		testreq.Skip(t, testreq.Git, "git is not installed")
	}
	seeds := []uint64{1, 2, 3}
	if *diffSeed != 0 {
		seeds = []uint64{*diffSeed}
	}
	for _, seed := range seeds {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			t.Parallel()
			d := newDifferential(t, seed)
			for step := range *diffSteps {
				op := d.step()
				d.check(step, op)
			}
		})
	}
}

type differential struct {
	t      *testing.T
	r      *rand.Rand
	repo   string // the git working tree
	global string // the global knowledge directory
	inc    string // the artifact updated by every build
	log    []string
	// the source of the next build
	mode       string // rev, staged or worktree
	withGlobal bool
	keepGoing  bool
	cancelAt   int // cancel the incremental build after this many documents (0: never)
	nextID     int
	commits    int
}

const diffMaxFile = 3 << 10

var diffScopes = []string{"", "services/api/", "services/api/handlers/", "docs/"}

func newDifferential(t *testing.T, seed uint64) *differential {
	root := t.TempDir()
	d := &differential{
		t: t, r: rand.New(rand.NewPCG(seed, 99)),
		repo: filepath.Join(root, "repo"), global: filepath.Join(root, "home", "knowledge"), inc: filepath.Join(root, "inc"),
		mode: "rev", nextID: 1,
	}
	for _, dir := range []string{d.repo, d.global} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	d.git("init", "-q", "-b", "main")
	for i := range 12 {
		d.write(d.topicPath(diffScopes[i%len(diffScopes)], fmt.Sprintf("t%02d", i)), d.topic())
	}
	for range 4 {
		d.addMemory()
	}
	d.write(filepath.Join(d.repo, ".kb", "context.md"), "Project context: "+sentence(d.r, 10)+"\n")
	d.write(filepath.Join(d.repo, "services", "api", "AGENTS.md"), "API agents: "+sentence(d.r, 8)+"\n")
	d.write(filepath.Join(d.global, "g1.md"), "# Global\n\n"+sentence(d.r, 12)+"\n")
	d.git("add", "-A")
	d.git("commit", "-q", "-m", "first")
	return d
}

// step applies one random operation and returns its description.
func (d *differential) step() string {
	d.cancelAt = 0
	docs := d.documents()
	pick := func() string { return docs[d.r.IntN(len(docs))] }
	var op string
	switch n := d.r.IntN(16); {
	case n < 3 || len(docs) < 4:
		scope := diffScopes[d.r.IntN(len(diffScopes))]
		p := d.topicPath(scope, fmt.Sprintf("n%03d", d.r.IntN(1000)))
		d.write(p, d.topic())
		op = "add " + d.rel(p)
	case n < 5:
		p := pick()
		d.append(p, "\n## Edited\n\n"+sentence(d.r, 15)+"\n")
		op = "edit " + d.rel(p)
	case n < 6:
		p := pick()
		os.Remove(p)
		op = "delete " + d.rel(p)
	case n < 7:
		p := pick()
		to := filepath.Join(filepath.Dir(p), fmt.Sprintf("renamed-%03d.md", d.r.IntN(1000)))
		if strings.Contains(p, "/memories/") {
			return d.step()
		}
		d.rename(p, to)
		op = "rename " + d.rel(p) + " → " + d.rel(to)
	case n < 8:
		p := pick()
		if strings.Contains(p, "/memories/") || strings.HasPrefix(p, d.global) {
			return d.step()
		}
		scope := diffScopes[d.r.IntN(len(diffScopes))]
		to := d.topicPath(scope, strings.TrimSuffix(filepath.Base(p), ".md"))
		d.rename(p, to)
		op = "move " + d.rel(p) + " → " + d.rel(to)
	case n < 9:
		p := d.addMemory()
		op = "remember " + d.rel(p)
	case n < 10:
		// Break a memory's frontmatter, or fix the broken ones.
		broken := false
		for _, p := range docs {
			if data, _ := os.ReadFile(p); strings.Contains(string(data), "id: [broken") {
				d.write(p, strings.Replace(string(data), "id: [broken", "id: 9"+fmt.Sprint(d.r.IntN(90)), 1))
				broken = true
				op = "fix " + d.rel(p)
			}
		}
		if !broken {
			p := d.addMemory()
			data, _ := os.ReadFile(p)
			d.write(p, strings.Replace(string(data), "id: ", "id: [broken", 1))
			op = "break " + d.rel(p)
		}
	case n < 11:
		p := pick()
		if data, _ := os.ReadFile(p); len(data) > diffMaxFile {
			d.write(p, d.topic())
			op = "shrink " + d.rel(p)
		} else {
			d.append(p, strings.Repeat(sentence(d.r, 20)+"\n", diffMaxFile/100))
			op = "grow over the cap " + d.rel(p)
		}
	case n < 12:
		switch g := filepath.Join(d.global, fmt.Sprintf("g%d.md", d.r.IntN(3))); d.r.IntN(3) {
		case 0:
			os.Remove(g)
			op = "global remove " + filepath.Base(g)
		default:
			d.write(g, "# Global\n\n"+sentence(d.r, 12)+"\n")
			op = "global write " + filepath.Base(g)
		}
	case n < 13:
		d.withGlobal = !d.withGlobal
		op = fmt.Sprint("global included: ", d.withGlobal)
	case n < 14:
		d.keepGoing = !d.keepGoing
		op = fmt.Sprint("keep going: ", d.keepGoing)
	case n < 15:
		p := d.topicPath(diffScopes[d.r.IntN(len(diffScopes))], fmt.Sprintf("k%03d", d.r.IntN(1000)))
		d.write(p, d.topic())
		d.cancelAt = 1 + d.r.IntN(3)
		op = "cancel a build part-way, after adding " + d.rel(p)
	default:
		op = "nothing"
	}
	// Then stage, commit, or neither, and choose what the build reads.
	switch d.r.IntN(3) {
	case 0:
		d.git("add", "-A")
		op += "; stage"
	case 1:
		d.git("add", "-A")
		d.git("commit", "-q", "--allow-empty", "-m", op)
		op += "; commit"
	}
	d.mode = []string{"rev", "staged", "worktree"}[d.r.IntN(3)]
	op += "; build --" + d.mode
	d.log = append(d.log, op)
	return op
}

// check builds incrementally and from nothing, and compares what the two
// artifacts answer.
func (d *differential) check(step int, op string) {
	t := d.t
	if d.cancelAt > 0 {
		ctx, cancel := context.WithCancel(context.Background())
		n := 0
		_, err := d.build(ctx, d.inc, false, func(int, int) {
			if n++; n == d.cancelAt {
				cancel()
			}
		})
		cancel()
		if err == nil {
			// It finished before the cancellation took effect; fine.
			t.Logf("step %d: the cancelled build finished", step)
		} else if !errors.Is(err, context.Canceled) && !errors.Is(err, compiler.ErrInvalid) {
			d.fatalf(step, "cancelled build: %v", err)
		}
	}
	incRes, incErr := d.build(context.Background(), d.inc, false, nil)
	full := filepath.Join(t.TempDir(), "full")
	_, fullErr := d.build(context.Background(), full, true, nil)
	if (incErr == nil) != (fullErr == nil) {
		d.fatalf(step, "incremental build: %v; full build: %v", incErr, fullErr)
	}
	if incErr != nil {
		if !errors.Is(incErr, compiler.ErrInvalid) {
			d.fatalf(step, "build: %v", incErr)
		}
		// Both refused the source; the incremental artifact is the previous
		// one, which must still be whole.
		if _, err := os.Stat(filepath.Join(d.inc, artifact.ManifestFile)); err == nil {
			ix, err := query.Open(d.inc)
			if err != nil {
				d.fatalf(step, "the artifact left by a failed build does not open: %v", err)
			}
			ix.Close()
		}
		return
	}
	a, b := d.answers(d.inc), d.answers(full)
	if a != b {
		d.fatalf(step, "incremental (%v) and full builds answer differently:\n%s", incRes.Incremental, firstDifference(a, b))
	}
	if d.mode == "rev" && !strings.Contains(a, `"author":"a`) {
		d.fatalf(step, "no answer carries the ages the build records:\n%s", a)
	}
}

func (d *differential) fatalf(step int, format string, args ...any) {
	d.t.Helper()
	d.t.Fatalf("step %d: %s\noperations:\n  %s", step, fmt.Sprintf(format, args...), strings.Join(d.log, "\n  "))
}

// build compiles the current source into out, as kbc build does.
func (d *differential) build(ctx context.Context, out string, full bool, progress func(int, int)) (*compiler.BuildResult, error) {
	repo, err := gitsource.Open(d.repo)
	if err != nil {
		return nil, err
	}
	var snap gitsource.Snapshot
	switch d.mode {
	case "staged":
		snap, err = repo.Staged()
	case "worktree":
		snap, err = repo.Worktree()
	default:
		snap, err = repo.Rev("HEAD")
	}
	if err != nil {
		return nil, err
	}
	info := snap.Info()
	opts := compiler.BuildOptions{
		Options: compiler.Options{MaxFileSize: diffMaxFile, Workers: 2},
		Out:     out, Full: full, KeepGoing: d.keepGoing, Progress: progress, History: repo.History,
		Source:  artifact.Source{Mode: info.Mode, Rev: info.Rev, Commit: info.Commit, Tree: info.Tree},
		BuiltAt: time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC), DirtyBuiltAt: time.Date(2024, 5, 2, 10, 0, 0, 0, time.UTC),
	}
	if d.mode != "rev" {
		if opts.Base, err = repo.Rev("HEAD"); err != nil {
			return nil, err
		}
	}
	if d.withGlobal {
		if fi, err := os.Stat(d.global); err == nil && fi.IsDir() {
			opts.Global = &compiler.Global{Dir: d.global, Source: gitsource.Dir(d.global)}
		}
	}
	return compiler.Build(ctx, snap, opts)
}

// answers is everything an artifact answers: searches from several
// directories, the listing, every document, and stats less what names the
// artifact's own files.
func (d *differential) answers(dir string) string {
	out := answers(d.t, dir)
	ix, err := query.Open(dir)
	if err != nil {
		d.t.Fatal(err)
	}
	defer ix.Close()
	var b strings.Builder
	b.WriteString(out)
	for _, req := range []query.Request{
		{Query: "global", AllScopes: true, N: 20}, {Query: "edited", Dir: "services/api/handlers", N: 20, Chunks: true},
		{Query: "memory remembered", Kinds: []string{"memory"}, N: 20}, {Query: "agents context", Dir: "services/api", N: 10},
		{Query: "* status:deprecated", AllScopes: true, N: 20}, {Query: "* status:draft", AllScopes: true, N: 20},
		{Query: "* author:a1", AllScopes: true, N: 50}, {Query: "* updated:>2024-05-01T13:00:00Z", AllScopes: true, N: 50},
		{Query: "edited remembered", AllScopes: true, N: 20, Recency: 3 * time.Hour},
	} {
		resp, err := ix.Search(context.Background(), req)
		if err != nil {
			d.t.Fatal(err)
		}
		// A total past skipped chunks is a lower bound that depends on
		// the segments (topk_test.go checks it).
		resp.Total, resp.TotalExact = 0, false
		data, _ := json.Marshal(resp)
		fmt.Fprintf(&b, "%+v\n%s\n", req, data)
	}
	for _, ref := range []string{"memory:1", "memory:2", "t01"} {
		for _, from := range []string{"", "services/api"} {
			doc, err := documents.Get(context.Background(), ix, ref, from)
			data, _ := json.Marshal(doc)
			fmt.Fprintf(&b, "get %s from %q: %s %v\n", ref, from, data, err)
		}
	}
	st, err := ix.Stats(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC))
	if err != nil {
		d.t.Fatal(err)
	}
	st.Dir, st.Bytes, st.WrittenAt = "", 0, time.Time{} // where and when the files are, not what they hold
	data, _ := json.Marshal(st)
	b.Write(data)
	return b.String()
}

func (d *differential) topicPath(scope, name string) string {
	return filepath.Join(d.repo, filepath.FromSlash(scope), ".kb", name+".md")
}

func (d *differential) topic() string {
	var b strings.Builder
	// Some topics are deprecated or drafts: left out of searches, or
	// found by status:.
	status := []string{"", "", "", "", "status: deprecated\n", "status: draft\n"}[d.r.IntN(6)]
	fmt.Fprintf(&b, "---\ntags: [%s]\n%s---\n# %s\n\n%s\n", vocabulary[d.r.IntN(len(vocabulary))], status, sentence(d.r, 3), sentence(d.r, 20))
	for i := range d.r.IntN(3) {
		fmt.Fprintf(&b, "\n## Part %d\n\n%s\n", i, sentence(d.r, 25))
	}
	return b.String()
}

func (d *differential) addMemory() string {
	scope := diffScopes[d.r.IntN(2)]
	id := d.nextID
	d.nextID++
	p := filepath.Join(d.repo, filepath.FromSlash(scope), ".kb", "memories", fmt.Sprintf("%03d-m.md", id))
	d.write(p, fmt.Sprintf("---\nid: %d\ncreated: 2024-05-01T10:00:00Z\n---\nA remembered memory: %s\n", id, sentence(d.r, 10)))
	return p
}

// documents lists the markdown files of the repository's .kb/ directories
// and of the global scope.
func (d *differential) documents() []string {
	var out []string
	for _, root := range []string{d.repo, d.global} {
		filepath.WalkDir(root, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.Name() == ".git" {
				return filepath.SkipDir
			}
			if err == nil && !e.IsDir() && strings.HasSuffix(p, ".md") && (root == d.global || strings.Contains(p, "/.kb/")) {
				out = append(out, p)
			}
			return nil
		})
	}
	slices.Sort(out)
	return out
}

func (d *differential) rel(p string) string {
	if rel, err := filepath.Rel(d.repo, p); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return "global:" + filepath.Base(p)
}

func (d *differential) write(p, content string) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		d.t.Fatal(err)
	}
}

func (d *differential) append(p, content string) {
	data, err := os.ReadFile(p)
	if err != nil {
		d.t.Fatal(err)
	}
	d.write(p, string(data)+content)
}

func (d *differential) rename(from, to string) {
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		d.t.Fatal(err)
	}
	if err := os.Rename(from, to); err != nil {
		d.t.Fatal(err)
	}
}

func (d *differential) git(args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = d.repo
	// Each commit has an author and a time of its own, so that the ages
	// builds record differ from document to document.
	if args[0] == "commit" {
		d.commits++
	}
	at := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC).Add(time.Duration(d.commits) * time.Hour).Format(time.RFC3339)
	author := fmt.Sprintf("a%d", d.commits%3)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME="+author, "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+at, "GIT_COMMITTER_DATE="+at,
		"GIT_CONFIG_NOSYSTEM=1", "HOME="+filepath.Dir(d.global))
	if out, err := cmd.CombinedOutput(); err != nil {
		d.t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
