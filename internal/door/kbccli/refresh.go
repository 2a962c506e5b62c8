package kbccli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/internal/cli"
)

// refreshArtifact brings the artifact at the repository root up to date
// with the working tree, incrementally, after a write to the knowledge, so
// that the next search finds what was written. It keeps the analysis and
// global scope of the artifact it replaces, and leaves files with errors
// out (saying so) rather than refusing. A failure is a warning: the write
// it follows has happened and stays.
func refreshArtifact(ctx context.Context, s *cli.Streams, repo *gitsource.Repo) {
	if err := refresh(ctx, s, repo, ""); err != nil {
		fmt.Fprintf(s.Err, "kbc: warning: the artifact was not refreshed (%v); run kbc build\n", err)
	}
}

// refresh rebuilds the artifact in out ("" for .kbq at the repository
// root) from the working tree.
func refresh(ctx context.Context, s *cli.Streams, repo *gitsource.Repo, out string) error {
	if out == "" {
		out = filepath.Join(repo.Root(), artifact.DefaultDir)
	}
	o := sourceOptions{worktree: true}
	analysis := artifact.DefaultAnalysis
	if prev, err := artifact.ReadHeader(out); err == nil {
		analysis = prev.Analysis
		o.global, o.noGlobal = prev.Global.Included, !prev.Global.Included
	}
	src, err := openSource(s, repo.Root(), &o)
	if err != nil {
		return err
	}
	_, err = compile(ctx, s, src, compileSettings{
		out: out, analysis: analysis, keepGoing: true, format: "text", diagnostics: s.Err,
	})
	return err
}
