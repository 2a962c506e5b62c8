// Command kbq is the read-only kbq query binary: it searches the artifact
// kbc compiles and serves it to people, scripts and agents (kbq serve, kbq
// mcp).
package main

import (
	"os"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/kbqcli"
	"github.com/kbqdev/kbq/internal/door/kbqserve"
	"github.com/kbqdev/kbq/internal/growstack"
)

func main() {
	growstack.Grow()
	s := cli.System()
	os.Exit(kbqcli.Main(os.Args[1:], s, kbqserve.Commands(s)...))
}
