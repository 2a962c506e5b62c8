package kbqcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
	"github.com/kbqdev/kbq/internal/door/render"
	"github.com/kbqdev/kbq/internal/usage"
	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/query"
	"github.com/kbqdev/kbq/query/documents"
)

type getOptions struct {
	io     *cli.Streams
	src    reader.Sources
	dir    string
	asJSON bool
	ref    string // TOPIC, PATH or memory:ID
}

func newGetCommand(s *cli.Streams) *cli.Command {
	o := &getOptions{io: s}
	return &cli.Command{
		Name:      "get",
		Quick:     true,
		Usage:     "print a whole document",
		UsageText: "kbq get TOPIC|PATH|memory:ID [--dir D] [--json]",
		Description: `Prints a document as written, frontmatter included. Name it by its path,
relative to the current directory as git's are, or absolute
(.kb/deploy.md), by its topic (deploy/steps: the path inside .kb/ without
.md) or, for memories, memory:ID. When several scopes hold the topic or id,
the one in force from --dir (default: the current directory) wins, the
deepest first.

` + reader.ExitCodesHelp,
		Flags: append(o.src.Flags(),
			&cli.StringFlag{Name: "dir", Complete: cli.Dirs, Usage: "resolve topics from `DIR` (default: the current directory)", Destination: &o.dir},
			&cli.BoolFlag{Name: "json", Usage: "print JSON with the document's metadata and content", Destination: &o.asJSON},
		),
		Complete: func(args []string, partial string) []string {
			if len(args) > 0 {
				return nil
			}
			return documentNames(s, o.src.One())
		},
		Action: func(c *cli.Context) error {
			if c.NArg() != 1 {
				return cli.Usagef("kbq get takes one TOPIC, PATH or memory:ID")
			}
			o.ref = c.Args().First()
			return runGet(c.Context, o)
		},
	}
}

func runGet(ctx context.Context, o *getOptions) error {
	s := o.io
	ix, err := open(s, &o.src)
	if err != nil {
		return err
	}
	defer closeOpened(s, ix)
	d, err := repoDir(ix, o.dir, "with several, name the document REPO:PATH")
	if err != nil {
		return err
	}
	ref, err := documentRef(ix, o.ref)
	if err != nil {
		return err
	}
	doc, err := ix.Get(ctx, reader.GetRequest{Ref: ref, Dir: d})
	if err != nil {
		return err
	}
	defer newUsage(s).RecordGet(ix, usage.ViaCLI, doc)
	return writeDocument(s, doc, o.asJSON)
}

// writeDocument prints doc as written, or as JSON, with notes on stderr.
func writeDocument(s *cli.Streams, doc *documents.Document, asJSON bool) error {
	switch {
	case doc.SupersededBy != "":
		fmt.Fprintf(s.Err, "kbq: note: %s is superseded by %s\n", visible.Line(doc.Path), visible.Line(doc.SupersededBy))
	case doc.Status == "deprecated" || doc.Status == "superseded":
		fmt.Fprintf(s.Err, "kbq: note: %s is %s\n", visible.Line(doc.Path), doc.Status)
	}
	if len(doc.Disputed) > 0 {
		fmt.Fprintf(s.Err, "kbq: note: %s is disputed by %s, and neither is superseded\n", visible.Line(doc.Path), visible.Line(strings.Join(doc.Disputed, ", ")))
	}
	if asJSON {
		return render.JSON(s.Out, doc)
	}
	if s.ErrTTY {
		// Where it stands in git, for a person reading; JSON carries it
		// for programs.
		switch a := doc.Age; {
		case a.Uncommitted:
			fmt.Fprintf(s.Err, "kbq: %s has changes not yet committed\n", visible.Line(doc.Path))
		case a.Updated != "":
			fmt.Fprintf(s.Err, "kbq: %s last changed %s by %s (%.12s)\n", visible.Line(doc.Path), render.UpdatedCell(a), visible.Line(a.Author), a.Commit)
		}
	}
	_, err := io.WriteString(s.Out, visible.Text(doc.Content))
	return err
}

// documentNames lists what kbq get accepts from the artifact found from
// the current directory: topic keys and memory:IDs, for completion.
func documentNames(s *cli.Streams, index string) []string {
	var names []string
	for _, d := range artifactDocuments(s, index) {
		names = append(names, d.Topic)
		if d.ID > 0 {
			names = append(names, fmt.Sprintf("memory:%d", d.ID))
		}
	}
	return names
}

// artifactDocuments lists the documents of the artifact found from the
// current directory, for completion: none when there is no artifact.
func artifactDocuments(s *cli.Streams, index string) []artifact.Document {
	cwd, err := os.Getwd()
	if err != nil {
		return nil
	}
	dir, _, err := query.Locate(index, s.Getenv("KBQ_INDEX"), cwd)
	if err != nil {
		return nil
	}
	ix, err := query.Open(dir)
	if err != nil {
		return nil
	}
	defer ix.Close()
	docs, _ := ix.Documents()
	return docs
}

// artifactTags completes --tag with the artifact's tags.
func artifactTags(s *cli.Streams) func(string) []string {
	return func(string) []string {
		var tags []string
		for _, d := range artifactDocuments(s, "") {
			tags = append(tags, d.Tags...)
		}
		return tags
	}
}

// artifactScopes completes --scope with the artifact's scopes.
func artifactScopes(s *cli.Streams) func(string) []string {
	return func(string) []string {
		var scopes []string
		for _, d := range artifactDocuments(s, "") {
			scopes = append(scopes, d.Scope)
		}
		return scopes
	}
}

// documentRef turns a path typed on the command line (one ending in .md,
// or starting with ./ or ../, or absolute) into the repository path it
// names, relative to the current directory as git's paths are. Topic keys
// and memory:ID pass unchanged.
func documentRef(ix *reader.Opened, ref string) (string, error) {
	looksLikePath := filepath.IsAbs(ref) || strings.HasPrefix(ref, "./") || strings.HasPrefix(ref, "../") ||
		strings.EqualFold(filepath.Ext(ref), ".md")
	if !looksLikePath || strings.HasPrefix(ref, "memory:") || ix.RepoRoot == "" || ix.Named() {
		return ref, nil
	}
	abs, err := filepath.Abs(ref)
	if err != nil {
		return "", err
	}
	rel, ok := reader.InRepo(ix.RepoRoot, abs)
	if !ok {
		return "", cli.Usagef("%s is outside the repository at %s", ref, ix.RepoRoot)
	}
	docs, err := ix.Parts()[0].Index.Documents()
	if err != nil {
		return "", err
	}
	for _, d := range docs {
		if d.Path == rel {
			return rel, nil
		}
	}
	hint := "kbq list shows them"
	for _, d := range docs {
		if d.Path == filepath.ToSlash(filepath.Clean(ref)) {
			hint = "paths are relative to the current directory; from the repository root this is " + d.Path
		}
	}
	return "", fmt.Errorf("%w: %s (%s) is not a document of the artifact (%s)", documents.ErrNotFound, ref, rel, hint)
}
