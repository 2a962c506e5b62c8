// Command kbq-serve runs kbq serve and kbq mcp, which kbq hands over to it:
// the knowledge over a read-only HTTP JSON API and the Model Context
// Protocol.
package main

import (
	"os"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/kbqserve"
)

func main() {
	os.Exit(kbqserve.Main(os.Args[1:], cli.System()))
}
