// Command kbc is the kbq knowledge compiler: it validates a repository's
// markdown knowledge and compiles it into a search artifact.
package main

import (
	"os"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/kbccli"
)

func main() {
	os.Exit(kbccli.Main(os.Args[1:], cli.System()))
}
