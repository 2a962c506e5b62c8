package kbccli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
)

type watchOptions struct {
	source   sourceOptions
	out      string
	debounce time.Duration
}

func newWatchCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	o := &watchOptions{}
	flags := sourceFlags(&o.source, "default, unless CI=true")
	// A watch follows the working tree; the other sources do not change.
	kept := flags[:0]
	for _, f := range flags {
		if n := f.Names()[0]; n != "rev" && n != "staged" && n != "worktree" {
			kept = append(kept, f)
		}
	}
	return &cli.Command{
		Name:      "watch",
		Usage:     "keep the artifact in step with the working tree as files change",
		UsageText: "kbc watch [-o DIR] [--debounce 100ms] [--global | --no-global]",
		Description: `Builds the artifact from the working tree, then watches the repository's
directories (those git does not ignore) and rebuilds, incrementally, each
time files change: a burst of saves is taken as one change once it has been
quiet for --debounce. Diagnostics of the files that changed are printed as
they are compiled; a file with errors is left out (as with kbc build
--keep-going) until it is fixed, and the watch goes on. A running kbq
serve or kbq mcp picks up each new artifact. Stop it with Ctrl-C.

` + exitCodesHelp,
		Flags: append(kept,
			&cli.StringFlag{Name: "out", Aliases: []string{"o"}, Usage: "write the artifact to `DIR` (default: .kbq at the repository root)", Destination: &o.out},
			&cli.DurationFlag{Name: "debounce", Usage: "wait until files have been quiet for `D` before rebuilding", Value: 100 * time.Millisecond, Destination: &o.debounce},
		),
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbc watch takes no arguments")
			}
			o.source.fromContext(c)
			o.source.worktree = true
			ctx, stop := signal.NotifyContext(c.Context, syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return runWatch(ctx, s, g, o)
		},
	}
}

// runWatch builds, then rebuilds on every settled change, until ctx ends.
func runWatch(ctx context.Context, s *cli.Streams, g *globalOptions, o *watchOptions) error {
	if o.debounce <= 0 {
		return cli.Usagef("--debounce must be positive")
	}
	repo, err := gitsource.Open(g.workDir())
	if err != nil {
		return err
	}
	if repo.Root() == "" {
		return cli.Usagef("a bare repository has no working tree to watch")
	}
	out := o.out
	if out == "" {
		out = filepath.Join(repo.Root(), artifact.DefaultDir)
	}
	out, _ = filepath.Abs(out)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watch: %w", err)
	}
	defer w.Close()
	ww := &watcher{s: s, w: w, out: out, watched: make(map[string]bool), gitDir: filepath.Join(repo.Root(), ".git")}

	analysis := artifact.DefaultAnalysis
	if prev, err := artifact.ReadHeader(out); err == nil {
		analysis = prev.Analysis
	}
	// build compiles the working tree and watches the directories its walk
	// found (those git does not ignore), returning how many were new: a
	// file written into a new directory before its watch was added is
	// missed by the watch, so the caller builds once more.
	build := func() int {
		src, err := openSource(s, repo.Root(), &o.source)
		if err != nil {
			fmt.Fprintf(s.Err, "kbc watch: %v\n", err)
			return 0
		}
		if _, err := compile(ctx, s, src, compileSettings{
			out: out, analysis: analysis, keepGoing: true, format: "text", diagnostics: s.Out,
		}); err != nil && ctx.Err() == nil {
			fmt.Fprintf(s.Err, "kbc watch: %v (still watching)\n", err)
		}
		return ww.addFrom(src)
	}
	// Watch first, then build, so that no change falls between the two.
	if src, err := openSource(s, repo.Root(), &o.source); err == nil {
		for _, err := range src.snapshot.Files() {
			if err != nil {
				break
			}
		}
		ww.addFrom(src)
	}
	for build() > 0 && ctx.Err() == nil {
	}
	fmt.Fprintf(s.Err, "kbc watch: watching %d directories of %s; Ctrl-C stops\n", len(ww.watched), repo.Root())

	var (
		timer   *time.Timer
		fire    <-chan time.Time
		first   time.Time
		changed string
	)
	for {
		select {
		case <-ctx.Done():
			fmt.Fprintln(s.Err, "kbc watch: stopped")
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			fmt.Fprintf(s.Err, "kbc watch: %v\n", err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			if !ww.relevant(ev) {
				continue
			}
			changed = ev.Name
			now := time.Now()
			if timer == nil {
				first = now
				timer = time.NewTimer(o.debounce)
				fire = timer.C
				continue
			}
			// Keep waiting for quiet, but never longer than a second in all.
			if now.Sub(first) < time.Second {
				timer.Reset(o.debounce)
			}
		case <-fire:
			timer, fire = nil, nil
			if rel, err := filepath.Rel(repo.Root(), changed); err == nil {
				changed = rel
			}
			fmt.Fprintf(s.Err, "kbc watch: %s changed\n", filepath.ToSlash(changed))
			if build() > 0 {
				// New directories are watched now; build once more for
				// what was written into them before.
				first, timer = time.Now(), time.NewTimer(o.debounce)
				fire = timer.C
			}
		}
	}
}

// watcher adds directories to the notifier once each.
type watcher struct {
	s       *cli.Streams
	w       *fsnotify.Watcher
	out     string
	gitDir  string
	watched map[string]bool
	full    bool // the system's limit on watches was reached
}

// addFrom watches the directories the last walk of src listed, and the
// global scope's, returning how many were not watched before.
func (ww *watcher) addFrom(src *source) int {
	before := len(ww.watched)
	if l, ok := src.snapshot.(interface {
		Root() string
		Dirs() []gitsource.DirStamp
	}); ok {
		for _, d := range l.Dirs() {
			ww.add(filepath.Join(l.Root(), filepath.FromSlash(d.Path)))
		}
	}
	if gl := src.options.Global; gl != nil {
		filepath.WalkDir(gl.Dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				ww.add(p)
			}
			return nil
		})
	}
	return len(ww.watched) - before
}

func (ww *watcher) add(dir string) {
	if ww.watched[dir] || ww.full {
		return
	}
	if err := ww.w.Add(dir); err != nil {
		if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
			ww.full = true
			fmt.Fprintf(ww.s.Err, "kbc watch: warning: the system's limit on watched directories is reached after %d; changes in the others are missed (raise fs.inotify.max_user_watches)\n", len(ww.watched))
			return
		}
		if !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(ww.s.Err, "kbc watch: %v\n", err)
		}
		return
	}
	ww.watched[dir] = true
}

// relevant reports whether an event may change the knowledge: not the
// artifact's own writes, git's, or a change of permissions alone.
func (ww *watcher) relevant(ev fsnotify.Event) bool {
	if ev.Op == fsnotify.Chmod {
		return false
	}
	for _, dir := range []string{ww.out, ww.gitDir} {
		if ev.Name == dir || strings.HasPrefix(ev.Name, dir+string(filepath.Separator)) {
			return false
		}
	}
	if ev.Op.Has(fsnotify.Remove) || ev.Op.Has(fsnotify.Rename) {
		delete(ww.watched, ev.Name)
	}
	return true
}
