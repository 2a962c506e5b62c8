// Package kbqserve implements kbq serve and kbq mcp: the knowledge served
// over a read-only HTTP JSON API and the Model Context Protocol. It is a
// program of its own, kbq-serve, which kbq runs for those two commands, so
// that net/http, TLS and the MCP SDK stay out of the kbq binary.
package kbqserve

import (
	"io"
	"log"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/version"
)

// Main runs kbq-serve with args (without the program name): "serve ..." or
// "mcp ...". It returns the exit code.
func Main(args []string, s *cli.Streams) int {
	log.SetOutput(io.Discard) // Bluge logs what it also returns as errors
	app := &cli.Command{Name: "kbq", Usage: "serve the knowledge compiled by kbc", Commands: []*cli.Command{
		newServeCommand(s),
		newMCPCommand(s),
		newEmbedQueryCommand(s),
		newFetchModelCommand(s),
		newReadEvalsCommand(s),
	}}
	app.Version = func() string { return version.Describe() }
	return cli.Run(app, args, s, func(error) (int, bool) { return 0, false })
}
