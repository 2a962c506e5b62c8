package kbqserve

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/door/reader"
)

// Server is the MCP server over the knowledge artifact with its read
// tools; kbc adds its write tools to it (kbc mcp), so that the writing
// server lives with the compiler and kbq stays read-only.
type Server struct {
	*mcp.Server
	t *served
}

// NewServer returns a server with the read tools over the artifact that
// indexDir names, else $KBQ_INDEX, else the repository's .kbq/. The
// artifact need not exist yet.
func NewServer(s *cli.Streams, indexDir, name, instructions string) *Server {
	t := serverTools(s, indexDir)
	return &Server{Server: newMCPServerWith(t, name, instructions), t: t}
}

// Reload takes a newly built artifact into service at once, so that the
// call after a write sees it.
func (srv *Server) Reload() {
	for _, l := range srv.t.lives() {
		l.Reload()
	}
}

// ArtifactDir is the artifact directory served, "" when there is none.
func (srv *Server) ArtifactDir() string {
	if srv.t.live == nil {
		return ""
	}
	return srv.t.live.Dir()
}

// DirArg turns a dir argument of a tool call (relative to the repository
// root, or absolute inside it) into a slash-separated repository path.
func (srv *Server) DirArg(d string) (string, error) { return srv.t.dirArg(d) }

// PathArg is DirArg for the path argument called name, which has no default.
func (srv *Server) PathArg(name, p string) (string, error) { return srv.t.pathArg(name, p) }

// ServeStdio runs the server on stdin and stdout until stdin ends, keeping
// the artifact current; name prefixes messages on stderr.
func (srv *Server) ServeStdio(ctx context.Context, s *cli.Streams, name string) error {
	defer srv.t.close()
	srv.t.usage.Background() // answers do not wait on the usage log
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv.t.watch(ctx, s, name)
	err := srv.Run(ctx, stdioTransport(s.In, s.Out))
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// newUsage records use, with its one complaint on stderr.
func newUsage(s *cli.Streams) *reader.Usage {
	return reader.NewUsage(s.Getenv, func(msg string) { fmt.Fprintf(s.Err, "kbq: note: %s\n", msg) })
}
