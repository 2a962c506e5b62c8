package kbccli

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/hooks"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/safefs"
	"github.com/kbqdev/kbq/internal/version"
)

//go:embed scaffold
var scaffold embed.FS

// workflowPath is where kbc init writes the CI workflow.
const workflowPath = ".github/workflows/knowledge.yml"

type initOptions struct {
	noHook, noCI bool
}

func newInitCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	o := &initOptions{}
	return &cli.Command{
		Name:      "init",
		Usage:     "set a repository up for kbq: .kb/, its configuration, the hook and CI",
		UsageText: "kbc init [--no-hook] [--no-ci]",
		Description: `Sets the repository up for kbq, leaving every file that exists as it is:

   .kb/context.md                    the project context, to edit
   ` + compiler.ConfigPath + `                   the configuration, every setting
                                     shown at its default
   .gitignore                        gains /` + artifact.DefaultDir + `/, the built artifact
   the pre-commit hook               as kbc hooks install puts it
   ` + workflowPath + `     checks and builds on every push and
                                     pull request, comments the changes

Nothing is staged or committed: review the files, then commit them.

EXAMPLES:
   kbc init                    everything
   kbc init --no-ci            no GitHub Actions workflow

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "no-hook", Usage: "do not install the pre-commit hook", Destination: &o.noHook},
			&cli.BoolFlag{Name: "no-ci", Usage: "do not write the GitHub Actions workflow", Destination: &o.noCI},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbc init takes no arguments; run it in the repository (or give -C DIR)")
			}
			return runInit(s, g, o)
		},
	}
}

func runInit(s *cli.Streams, g *globalOptions, o *initOptions) error {
	repo, err := gitsource.Open(g.workDir())
	if errors.Is(err, gitsource.ErrNotRepository) {
		return fmt.Errorf("%w: kbq keeps knowledge in git; run git init first", err)
	}
	if err != nil {
		return err
	}
	root := repo.Root()
	if root == "" {
		return fmt.Errorf("%s is a bare repository: kbc init writes files, so run it in a clone", repo.GitDir())
	}
	say := func(format string, args ...any) { fmt.Fprintf(s.Err, "kbc: "+format+"\n", args...) }
	files := []struct{ path, template string }{
		{".kb/context.md", "context.md"},
		{compiler.ConfigPath, "config.yaml"},
	}
	if !o.noCI {
		files = append(files, struct{ path, template string }{workflowPath, "knowledge.yml"})
	}
	branch, from := repo.DefaultBranch()
	replace := strings.NewReplacer("__NAME__", filepath.Base(root), "__VERSION__", version.Version,
		"__BRANCH__", branch)
	for _, f := range files {
		data, err := fs.ReadFile(scaffold, "scaffold/"+f.template)
		if err != nil {
			return err
		}
		created, err := createFile(root, filepath.Join(root, filepath.FromSlash(f.path)), []byte(replace.Replace(string(data))))
		if err != nil {
			return err
		}
		switch {
		case created && f.path == workflowPath:
			say("created %s: it checks pull requests and builds pushes to %s (%s)", f.path, branch, from)
		case created:
			say("created %s", f.path)
		default:
			say("kept %s, which exists", f.path)
		}
	}
	added, err := ignoreArtifact(root, filepath.Join(root, ".gitignore"))
	if err != nil {
		return err
	}
	if added {
		say("added /%s/ to .gitignore: the artifact is built, not committed", artifact.DefaultDir)
	}
	if !o.noHook {
		dir, err := repo.HooksDir()
		if err != nil {
			return err
		}
		res, err := hooks.Install(dir, selfPath())
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, res.Path)
		switch {
		case !res.Changed:
			say("kept the pre-commit hook in %s", filepath.ToSlash(rel))
		default:
			say("installed the pre-commit hook in %s", filepath.ToSlash(rel))
		}
	}
	add := ".kb .gitignore"
	if !o.noCI {
		add += " .github"
	}
	fmt.Fprintf(s.Err, `
Next: write what every agent should know in .kb/context.md, then
   kbc build && kbq context        compile it and see what agents get

.kb/context.md, and AGENTS.md, CLAUDE.md and GEMINI.md anywhere, are loaded
into every agent session: keep them short (7 KiB for the project). Any other
markdown in .kb/ is a topic, found by kbq search when it is needed: put
documentation pages there, not in a context file.

   git add %s && git commit -m "Add kbq knowledge"
`, add)
	return nil
}

// createFile writes data to a new file at name, creating its directory;
// it reports false, and leaves the file alone, when one exists. No
// directory between root and name may be a symbolic link.
func createFile(root, name string, data []byte) (bool, error) {
	if err := safefs.NoLinksBelow(root, filepath.Dir(name)); err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		return false, err
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(name)
		return false, err
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return false, err
	}
	return true, nil
}

// ignoreArtifact adds the artifact directory to the .gitignore at name
// unless a line there ignores it already. A .gitignore that is a symbolic
// link is refused, not written through.
func ignoreArtifact(root, name string) (bool, error) {
	if err := safefs.NoLinksBelow(root, name); err != nil {
		return false, err
	}
	data, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if strings.Trim(strings.TrimSpace(line), "/") == artifact.DefaultDir {
			return false, nil
		}
	}
	var b bytes.Buffer
	b.Write(data)
	if len(data) > 0 && !bytes.HasSuffix(data, []byte("\n")) {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "# the kbq artifact, built by kbc build\n/%s/\n", artifact.DefaultDir)
	f, err := safefs.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return false, err
	}
	_, err = f.Write(b.Bytes())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return true, err
}

// selfPath is this kbc's path, for the hook to fall back on when kbc is
// not on PATH.
func selfPath() string {
	self, err := os.Executable()
	if err != nil {
		return "kbc"
	}
	if abs, err := filepath.EvalSymlinks(self); err == nil {
		return abs
	}
	return self
}
