package kbqcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	cmd := exec.CommandContext(ctx, path, "embed-query", "--url", id.URL, "--model", id.Model, "--dims", strconv.Itoa(id.Dims), "--key-env", id.KeyEnv)
	cmd.Stdin = strings.NewReader(text)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		if msg := lastLine(stderr.String()); msg != "" {
			return nil, fmt.Errorf("%s", strings.TrimPrefix(msg, "kbq: "))
		}
		return nil, fmt.Errorf("run %s: %w", path, err)
	}
	var vec []float32
	if err := json.Unmarshal(out.Bytes(), &vec); err != nil {
		return nil, fmt.Errorf("%s embed-query: %w", path, err)
	}
	return vec, nil
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
