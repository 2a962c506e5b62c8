// Package kbqserve implements kbq serve and kbq mcp: the knowledge served
// over a read-only HTTP JSON API and the Model Context Protocol. kbq's
// command line (internal/kbqcli) takes these commands from cmd/kbq, so
// that neither front door imports the other.
package kbqserve

import "github.com/kbqdev/kbq/internal/cli"

// Commands are kbq serve and kbq mcp.
func Commands(s *cli.Streams) []*cli.Command {
	return []*cli.Command{newServeCommand(s), newMCPCommand(s)}
}
