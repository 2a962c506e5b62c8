package kbccli

import (
	"fmt"
	"path/filepath"

	"github.com/kbqdev/kbq/gitsource"
	"github.com/kbqdev/kbq/hooks"
	"github.com/kbqdev/kbq/internal/cli"
)

func newHooksCommand(s *cli.Streams, g *globalOptions) *cli.Command {
	var uninstall bool
	install := &cli.Command{
		Name:      "install",
		Usage:     "install the pre-commit hook",
		UsageText: "kbc hooks install",
		Description: `Installs a pre-commit hook that runs "kbc check --staged": every commit's
knowledge files are validated, and likely secrets refused, before they are
committed. The hook goes where git looks for hooks (core.hooksPath, else
.git/hooks). A pre-commit hook already there is kept as
pre-commit.kbq-chained and runs first. Installing again changes nothing;
kbc hooks uninstall removes the hook and puts the earlier one back.

Teams that use the pre-commit framework can use the kbc-check hook of
.pre-commit-hooks.yaml instead.

` + exitCodesHelp,
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "uninstall", Usage: "remove the hook instead, as kbc hooks uninstall does", Destination: &uninstall},
		},
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbc hooks install takes no arguments")
			}
			if uninstall {
				return uninstallHook(s, g)
			}
			dir, err := hooksDir(g)
			if err != nil {
				return err
			}
			res, err := hooks.Install(dir, selfPath())
			if err != nil {
				return err
			}
			switch {
			case !res.Changed:
				fmt.Fprintf(s.Err, "kbc: the hook is already installed in %s\n", res.Path)
			case res.Chained != "":
				fmt.Fprintf(s.Err, "kbc: installed %s; the hook that was there runs first, as %s\n", res.Path, filepath.Base(res.Chained))
			default:
				fmt.Fprintf(s.Err, "kbc: installed %s\n", res.Path)
			}
			return nil
		},
	}
	remove := &cli.Command{
		Name:        "uninstall",
		Usage:       "remove the pre-commit hook",
		UsageText:   "kbc hooks uninstall",
		Description: "Removes the hook kbc hooks install put in place, and puts back the hook it chained, if any.\n\n" + exitCodesHelp,
		Action: func(c *cli.Context) error {
			if c.Args().Present() {
				return cli.Usagef("kbc hooks uninstall takes no arguments")
			}
			return uninstallHook(s, g)
		},
	}
	return &cli.Command{
		Name:      "hooks",
		Usage:     "manage the git pre-commit hook",
		UsageText: "kbc hooks install | uninstall",
		Commands:  []*cli.Command{install, remove},
	}
}

func hooksDir(g *globalOptions) (string, error) {
	repo, err := gitsource.Open(g.workDir())
	if err != nil {
		return "", err
	}
	return repo.HooksDir()
}

func uninstallHook(s *cli.Streams, g *globalOptions) error {
	dir, err := hooksDir(g)
	if err != nil {
		return err
	}
	res, err := hooks.Uninstall(dir)
	if err != nil {
		return err
	}
	switch {
	case !res.Changed:
		fmt.Fprintf(s.Err, "kbc: no kbq hook in %s\n", dir)
	case res.Chained != "":
		fmt.Fprintf(s.Err, "kbc: removed %s and restored the hook it chained\n", res.Path)
	default:
		fmt.Fprintf(s.Err, "kbc: removed %s\n", res.Path)
	}
	return nil
}
