package kbccli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/compiler"
	"github.com/kbqdev/kbq/embedding"
	"github.com/kbqdev/kbq/embedding/remote"
	"github.com/kbqdev/kbq/internal/cli"
	"github.com/kbqdev/kbq/internal/trust"
	"github.com/kbqdev/kbq/internal/units"
)

// The variable with the openai provider's model, for a configuration
// that leaves it out.
const envEmbedModel = "KBQ_EMBED_MODEL"

// embedders opens the embedder of a build: the one --embed names, else the
// one the configuration turns on, else none. It keeps what it opened for
// close.
type embedders struct {
	ctx     context.Context
	s       *cli.Streams
	flag    string // --embed's value
	closers []func()
}

func (e *embedders) close() {
	for _, c := range e.closers {
		c()
	}
}

// open is the build's compiler.Options.OpenEmbedder.
func (e *embedders) open(conf *compiler.EmbeddingsConfig) (compiler.Embedder, error) {
	spec, err := e.spec(conf)
	if err != nil || spec == nil {
		return nil, err
	}
	if spec.Provider == compiler.ProviderOpenAI {
		return e.openEndpoint(spec)
	}
	return e.openLocal(spec.Model)
}

// spec is what to open: --embed given over the configuration, with the
// environment filling in what neither says.
func (e *embedders) spec(conf *compiler.EmbeddingsConfig) (*compiler.EmbeddingsConfig, error) {
	var spec compiler.EmbeddingsConfig
	if conf != nil {
		spec = *conf
	}
	switch f := e.flag; {
	case f == "" && conf == nil:
		return nil, nil
	case strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://"):
		if spec.Provider != compiler.ProviderOpenAI {
			spec = compiler.EmbeddingsConfig{Provider: compiler.ProviderOpenAI}
		}
		spec.URL = f
	case f != "":
		spec = compiler.EmbeddingsConfig{Provider: compiler.ProviderLocal, Model: f}
	}
	if spec.Provider != compiler.ProviderOpenAI {
		return &spec, nil
	}
	if spec.URL == "" {
		spec.URL = e.s.Getenv(trust.Embeddings.URLEnv)
	}
	if spec.URL == "" {
		spec.URL = trust.DefaultURL
	}
	if err := remote.CheckURL(spec.URL); err != nil {
		return nil, cli.Usagef("embeddings endpoint: %v", err)
	}
	if spec.Model == "" {
		spec.Model = e.s.Getenv(envEmbedModel)
	}
	if spec.Model == "" {
		return nil, cli.Usagef("embeddings endpoint %s: which model? set embeddings.model in %s, or %s", spec.URL, compiler.ConfigPath, envEmbedModel)
	}
	return &spec, nil
}

// endpoint embeds with an OpenAI-compatible endpoint.
type endpoint struct {
	c *remote.Client
}

func (p endpoint) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	return p.c.Embed(ctx, texts)
}

func (p endpoint) Identity() artifact.Embeddings {
	return artifact.Embeddings{Provider: compiler.ProviderOpenAI, Model: p.c.Model, URL: strings.TrimRight(p.c.URL, "/"), Dims: p.c.Dims}
}

// openEndpoint opens the endpoint spec names and asks it for one vector,
// which tells the dimension and that the endpoint works before anything
// is compiled. The key goes only to an endpoint the user named (package
// trust): the flag, their environment or their own configuration.
func (e *embedders) openEndpoint(spec *compiler.EmbeddingsConfig) (compiler.Embedder, error) {
	named := strings.HasPrefix(e.flag, "http://") || strings.HasPrefix(e.flag, "https://")
	g := trust.Must(e.s.Getenv, e.warn).Key(trust.Embeddings, spec.URL, named)
	c := &remote.Client{URL: spec.URL, Model: spec.Model, Key: g.Key, KeyEnv: g.Env, Advice: g.Advice, Batch: spec.Batch, Timeout: spec.Timeout}
	if !g.Trusted {
		fmt.Fprintf(e.s.Err, "kbc: embedding with %s, which the repository names, without a key: %s\n", spec.URL, g.Advice)
	}
	if _, err := c.Embed(e.ctx, []string{"kbq"}); err != nil {
		return nil, err
	}
	return endpoint{c}, nil
}

func (e *embedders) warn(err error) { fmt.Fprintf(e.s.Err, "kbc: %v\n", err) }

// openLocal opens the model spec names: a model directory, which kbq then
// finds by its name in the models directory, or the name of a model there,
// which is downloaded first when kbq knows where from.
func (e *embedders) openLocal(spec string) (compiler.Embedder, error) {
	models, err := embedding.ModelsDir(e.s.Getenv)
	if err != nil {
		return nil, err
	}
	dir := spec
	if fi, err := os.Stat(spec); err == nil && fi.IsDir() {
		if _, err := embedding.Install(models, spec); err != nil {
			return nil, err
		}
	} else if dir, err = e.find(models, spec); err != nil {
		return nil, err
	}
	m, err := embedding.Load(dir)
	if err != nil {
		return nil, fmt.Errorf("load the model in %s: %w", filepath.Clean(dir), err)
	}
	e.closers = append(e.closers, func() { m.Close() })
	m.Warm() // while the build compiles
	return m, nil
}

// find finds the model called name in models, downloading it when it is
// missing and in the catalog.
func (e *embedders) find(models, name string) (string, error) {
	dir, err := embedding.Find(models, name)
	if !errors.Is(err, embedding.ErrNoModel) {
		return dir, err
	}
	d, known := embedding.Known(name)
	if !known {
		var names []string
		for _, k := range embedding.Catalog {
			names = append(names, k.Name)
		}
		return "", cli.Usagef("no model %s in %s, and kbq does not know where to download it (it knows %s): give the model's directory (config.json, tokenizer.json and model.safetensors) to --embed, or put it there",
			name, models, strings.Join(names, ", "))
	}
	fmt.Fprintf(e.s.Err, "kbc: downloading the model %s (%s, %s) from %s into %s\n", d.Name, units.Bytes(d.Size), d.License, d.URL, models)
	progress := cli.NewProgress(e.s, "downloading "+d.Name+" (KiB)")
	defer progress.Done()
	return remote.Fetch(e.ctx, nil, models, d, func(done, total int64) { progress.Update(int(done>>10), int(total>>10)) })
}
