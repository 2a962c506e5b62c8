package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Completion adds to root a "completion" command that prints scripts for
// bash, zsh and fish, and a hidden "__complete" command those scripts call
// with the words typed so far (the last one partial) to list what may
// come next: commands, flags, and what a command's Complete returns.
func Completion(root *Command, s *Streams) {
	name := root.Name
	root.Commands = append(root.Commands, &Command{
		Name:      "completion",
		Usage:     "print a shell completion script (bash, zsh, fish or powershell)",
		UsageText: name + " completion bash|zsh|fish|powershell",
		Description: "Prints a script that completes " + name + "'s commands, flags and arguments.\n\n" +
			"   bash:  source <(" + name + " completion bash)      (in ~/.bashrc)\n" +
			"   zsh:   source <(" + name + " completion zsh)       (in ~/.zshrc, after compinit)\n" +
			"   fish:  " + name + " completion fish | source    (in ~/.config/fish/config.fish)\n" +
			"   PowerShell:  " + name + " completion powershell | Out-String | Invoke-Expression    (in $PROFILE)\n\n" +
			"Flag values complete too: formats, kinds, modes, the artifact's tags and\n" +
			"scopes, and directories for -C, --dir and --index.",
		Action: func(c *Context) error {
			if c.NArg() != 1 {
				return Usagef("%s completion takes one shell: bash, zsh, fish or powershell", name)
			}
			script, ok := completionScripts(name)[c.Args().First()]
			if !ok {
				return Usagef("%s completion: no script for %q; choose bash, zsh, fish or powershell", name, c.Args().First())
			}
			_, err := io.WriteString(s.Out, script)
			return err
		},
	}, &Command{
		Name:            "__complete",
		Hidden:          true,
		SkipFlagParsing: true,
		Action: func(c *Context) error {
			for _, cand := range complete(root, c.Args().Slice()) {
				fmt.Fprintln(s.Out, cand)
			}
			return nil
		},
	})
	link(root)
}

// complete lists the candidates for the last of words, given those before.
func complete(root *Command, words []string) []string {
	if len(words) == 0 {
		words = []string{""}
	}
	partial, before := words[len(words)-1], words[:len(words)-1]
	cmd := root
	var args []string
	var valueOf Flag // the flag the partial word is the value of
	for i := 0; i < len(before); i++ {
		valueOf = nil
		w := before[i]
		switch {
		case w == "--":
			args = append(args, before[i+1:]...)
			i = len(before)
		case strings.HasPrefix(w, "-") && w != "-":
			name, _, hasValue := strings.Cut(strings.TrimLeft(w, "-"), "=")
			if f := cmd.flag(name); f != nil && f.TakesValue() && !hasValue {
				if i+1 == len(before) {
					valueOf = f
				}
				i++ // its value
			}
		default:
			if sub := cmd.find(w); sub != nil && len(args) == 0 {
				cmd = sub
				continue
			}
			args = append(args, w)
		}
	}
	var cands []string
	// --flag=partial completes like --flag partial.
	if name, value, ok := strings.Cut(partial, "="); ok && strings.HasPrefix(name, "-") && valueOf == nil {
		if f := cmd.flag(strings.TrimLeft(name, "-")); f != nil && f.TakesValue() {
			var out []string
			for _, v := range flagValues(f, value) {
				out = append(out, name+"="+v)
			}
			return out
		}
	}
	switch {
	case valueOf != nil:
		return flagValues(valueOf, partial)
	case strings.HasPrefix(partial, "-"):
		for c := cmd; c != nil; c = c.parent {
			for _, f := range c.Flags {
				for _, n := range f.Names() {
					if len(n) == 1 {
						cands = append(cands, "-"+n)
					} else {
						cands = append(cands, "--"+n)
					}
				}
			}
		}
		cands = append(cands, "--help")
	case len(cmd.Commands) > 0 && len(args) == 0:
		for _, sub := range cmd.Commands {
			if !sub.Hidden {
				cands = append(cands, sub.Name)
			}
		}
	case cmd.Complete != nil:
		cands = cmd.Complete(args, partial)
	}
	cands = slices.DeleteFunc(cands, func(c string) bool { return !strings.HasPrefix(c, partial) })
	slices.Sort(cands)
	return slices.Compact(cands)
}

// flagValues lists the values of f that complete partial.
func flagValues(f Flag, partial string) []string {
	vc, ok := f.(valueCompleter)
	if !ok || vc.values() == nil {
		return nil
	}
	cands := slices.DeleteFunc(vc.values()(partial), func(c string) bool { return !strings.HasPrefix(c, partial) })
	slices.Sort(cands)
	return slices.Compact(cands)
}

// dirsFor lists the directories that complete partial, with a slash.
func dirsFor(partial string) []string {
	dir, base := filepath.Split(partial)
	entries, err := os.ReadDir(cmpOr(dir, "."))
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), base) && (strings.HasPrefix(base, ".") || !strings.HasPrefix(e.Name(), ".")) {
			out = append(out, dir+e.Name()+"/")
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func completionScripts(name string) map[string]string {
	fn := "_" + strings.NewReplacer("-", "_").Replace(name)
	r := strings.NewReplacer("NAME", name, "FN", fn)
	return map[string]string{
		"bash": r.Replace(`# bash completion for NAME: source <(NAME completion bash)
FN() {
	local IFS=$'\n'
	COMPREPLY=($(NAME __complete "${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F FN NAME
`),
		"zsh": r.Replace(`#compdef NAME
# zsh completion for NAME: source <(NAME completion zsh), after compinit
FN() {
	local -a candidates
	candidates=("${(@f)$(NAME __complete "${(@)words[2,CURRENT]}" 2>/dev/null)}")
	compadd -a candidates
}
compdef FN NAME
`),
		"fish": r.Replace(`# fish completion for NAME: NAME completion fish | source
function __NAME_complete
	set -l words (commandline -opc) (commandline -ct)
	NAME __complete $words[2..-1] 2>/dev/null
end
complete -c NAME -f -a '(__NAME_complete)'
`),
		"powershell": r.Replace(`# PowerShell completion for NAME: NAME completion powershell | Out-String | Invoke-Expression
Register-ArgumentCompleter -Native -CommandName NAME -ScriptBlock {
	param($wordToComplete, $commandAst, $cursorPosition)
	$words = @($commandAst.CommandElements | Select-Object -Skip 1 | Where-Object { $_.Extent.StartOffset -lt $cursorPosition } | ForEach-Object { $_.ToString() })
	if ($wordToComplete -eq '') { $words += '' }
	& NAME __complete @words 2>$null | ForEach-Object {
		[System.Management.Automation.CompletionResult]::new($_, $_, 'ParameterValue', $_)
	}
}
`),
	}
}
