package kbqcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/answer"
	"github.com/kbqdev/kbq/internal/cli"
)

// queryEmbedder embeds the queries of kbq's commands. What needs the
// network it hands to kbq-serve, as it does the servers.
func queryEmbedder(s *cli.Streams) answer.Embedder {
	return answer.Embedder{Getenv: s.Getenv, Net: viaServer{s}, Warn: func(err error) {
		fmt.Fprintf(s.Err, "kbq: searching lexically only: %v\n", err)
	}}
}

// viaServer runs kbq-serve for what needs the network.
type viaServer struct{ s *cli.Streams }

func (v viaServer) EmbedQuery(ctx context.Context, id artifact.Embeddings, text string) ([]float32, error) {
	path, err := findServer()
	if err != nil {
		return nil, fmt.Errorf("the artifact's vectors come from the endpoint %s, which kbq reaches through %s: %w", id.URL, ServerBinary, err)
	}
	var vec []float32
	err = serverJSON(ctx, path, strings.NewReader(text), &vec,
		"embed-query", "--url", id.URL, "--model", id.Model, "--dims", strconv.Itoa(id.Dims), "--key-env", id.KeyEnv)
	return vec, err
}

// serverSaid is kbq-serve's own account of why it failed: the last line
// it wrote to stderr, without its "kbq: ".
type serverSaid string

func (s serverSaid) Error() string { return string(s) }

// serverJSON runs kbq-serve (at path) with args and stdin, and decodes
// the JSON it prints into out. When it fails having said why, the error
// is a serverSaid.
func serverJSON(ctx context.Context, path string, stdin io.Reader, out any, args ...string) error {
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if msg := lastLine(stderr.String()); msg != "" {
			return serverSaid(strings.TrimPrefix(msg, "kbq: "))
		}
		return fmt.Errorf("run %s: %w", path, err)
	}
	if err := json.Unmarshal(stdout.Bytes(), out); err != nil {
		return fmt.Errorf("%s %s: %w", path, args[0], err)
	}
	return nil
}

func (v viaServer) FetchModel(ctx context.Context, models, name string) error {
	path, err := findServer()
	if err != nil {
		return fmt.Errorf("the model %s is not in %s, and kbq downloads it through %s: %w", name, models, ServerBinary, err)
	}
	cmd := exec.CommandContext(ctx, path, "fetch-model", name)
	cmd.Env = append(os.Environ(), "KBQ_MODELS="+models)
	cmd.Stderr = v.s.Err
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the model %s could not be downloaded into %s (%s said why above)", name, models, ServerBinary)
	}
	return nil
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	return s[strings.LastIndexByte(s, '\n')+1:]
}
