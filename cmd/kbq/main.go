// Command kbq is the read-only kbq query binary: it searches the artifact
// kbc compiles and serves it to people, scripts and agents.
package main

import (
	"os"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/kbqcli"
)

func main() {
	os.Exit(kbqcli.Main(os.Args[1:], cli.System()))
}
