package kbccli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/internal/cli"
)

// localEmbedder is kbq's own encoder, as the compiler wants it.
type localEmbedder struct{ e *embedding.Encoder }

func (l localEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return l.e.Embed(ctx, texts)
}

func (l localEmbedder) Identity() artifact.Embeddings {
	i := l.e.Info()
	return artifact.Embeddings{Provider: i.Provider, Model: i.Model, Hash: i.Hash, Dims: i.Dims}
}

// openEmbedder opens the model spec names: a model directory, which kbq
// then finds by its name in the models directory, or the name of a model
// there. The caller closes it.
func openEmbedder(s *cli.Streams, spec string) (localEmbedder, func(), error) {
	models, err := embedding.ModelsDir(s.Getenv)
	if err != nil {
		return localEmbedder{}, nil, err
	}
	dir := spec
	if fi, err := os.Stat(spec); err == nil && fi.IsDir() {
		if _, err := embedding.Install(models, spec); err != nil {
			return localEmbedder{}, nil, err
		}
	} else {
		dir, err = embedding.Find(models, spec)
		if errors.Is(err, embedding.ErrNoModel) {
			return localEmbedder{}, nil, cli.Usagef("--embed %s: no such directory, and no model of that name in %s (give the model's directory: config.json, tokenizer.json and model.safetensors)", spec, models)
		}
		if err != nil {
			return localEmbedder{}, nil, cli.Usagef("--embed %s: %v", spec, err)
		}
	}
	e, err := embedding.Load(dir)
	if err != nil {
		return localEmbedder{}, nil, fmt.Errorf("load the model in %s: %w", filepath.Clean(dir), err)
	}
	return localEmbedder{e}, func() { e.Close() }, nil
}
