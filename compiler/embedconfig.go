package compiler

import (
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Embedding providers a configuration can name.
const (
	ProviderLocal  = "local"  // kbq's own encoder, with a model in the models directory
	ProviderOpenAI = "openai" // an OpenAI-compatible /embeddings endpoint
)

// EmbeddingsConfig is the embeddings section of a configuration: with it,
// kbc build embeds every chunk for semantic search. Fields the file leaves
// out are zero; the environment and defaults fill them in.
type EmbeddingsConfig struct {
	Provider string // ProviderLocal or ProviderOpenAI
	Model    string // the local model's name, or the endpoint's model
	URL      string // the endpoint's base, such as http://localhost:11434/v1
	Batch    int    // texts per request to the endpoint
	Timeout  time.Duration
}

var embeddingsKeys = []string{"provider", "model", "url", "key_env", "batch_size", "timeout"}

func (p configParser) embeddings(n *yaml.Node) {
	e := &EmbeddingsConfig{}
	ok := true
	p.mapping(n, "embeddings", embeddingsKeys, func(key string, v *yaml.Node) {
		if !p.scalar(v, "embeddings."+key) {
			ok = false
			return
		}
		switch key {
		case "provider":
			e.Provider = v.Value
			if v.Value != ProviderLocal && v.Value != ProviderOpenAI {
				p.errorf(v, "embeddings.provider: %q is not a provider: local (kbq's encoder) or openai (an OpenAI-compatible endpoint)", v.Value)
				ok = false
			}
		case "model":
			e.Model = v.Value
		case "url":
			e.URL = p.endpointURL(v, "embeddings", &ok)
		case "key_env":
			p.keyEnv(v, "embeddings", &ok)
		case "batch_size":
			n, err := strconv.Atoi(v.Value)
			if err != nil || n < 1 || n > 2048 {
				p.errorf(v, "embeddings.batch_size: %q is not a number of texts from 1 to 2048", v.Value)
				ok = false
			}
			e.Batch = n
		case "timeout":
			e.Timeout = p.timeout(v, "embeddings", &ok)
		}
	})
	if n.Kind != yaml.MappingNode || !ok {
		return
	}
	if e.Provider == "" {
		e.Provider = ProviderLocal
		if e.URL != "" {
			e.Provider = ProviderOpenAI
		}
	}
	if e.Provider == ProviderLocal {
		switch {
		case e.Model == "":
			p.errorf(n, "embeddings: name the model, such as model: all-MiniLM-L6-v2")
			return
		case e.Model != filepath.Base(e.Model) || strings.ContainsAny(e.Model, `/\`) || e.Model == "." || e.Model == "..":
			p.errorf(n, "embeddings.model: %q is a path; name a model, such as all-MiniLM-L6-v2, kept in the models directory ($KBQ_MODELS)", e.Model)
			return
		}
		for _, k := range []string{"url", "key_env", "batch_size", "timeout"} {
			if v := valueOf(n, k); v != nil {
				p.errorf(v, "embeddings.%s is a setting of the openai provider; the local encoder has no use for it", k)
				return
			}
		}
	}
	p.c.Embeddings = e
}

// valueOf is the value of key in the mapping n, or nil.
func valueOf(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
