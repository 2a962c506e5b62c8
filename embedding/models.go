package embedding

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kbqdev/kbq/artifact"
)

// Info identifies the model that made a vector: vectors of different
// models must never be compared.
type Info struct {
	Provider string // "local"
	Model    string // the model's name: its directory's
	Hash     string // Fingerprint of its files
	Dims     int
}

// Info identifies the encoder's model.
func (e *Encoder) Info() Info {
	return Info{Provider: "local", Model: e.name, Hash: e.hash, Dims: e.cfg.Hidden}
}

// Identity says which model embeds, as an artifact's manifest records it:
// the encoder is a build's embedder (compiler.Embedder) as it is.
func (e *Encoder) Identity() artifact.Embeddings {
	i := e.Info()
	return artifact.Embeddings{Provider: i.Provider, Model: i.Model, Hash: i.Hash, Dims: i.Dims}
}

// ModelsDir is where models are kept: $KBQ_MODELS, or kbq/models in the
// user's cache directory.
func ModelsDir(getenv func(string) string) (string, error) {
	if dir := getenv("KBQ_MODELS"); dir != "" {
		return dir, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for models (set KBQ_MODELS): %w", err)
	}
	return filepath.Join(cache, "kbq", "models"), nil
}

// ErrNoModel means a named model is not in the models directory.
var ErrNoModel = errors.New("model not found")

// Find returns the directory of the model called name in models.
func Find(models, name string) (string, error) {
	if name == "" || name != filepath.Base(name) || name == "." || name == ".." {
		return "", fmt.Errorf("%q is not a model name", name)
	}
	dir := filepath.Join(models, name)
	if _, err := os.Stat(filepath.Join(dir, ConfigFile)); err != nil {
		return "", fmt.Errorf("%w: %s has no %s", ErrNoModel, dir, ConfigFile)
	}
	return dir, nil
}

// Install makes the model in dir available by its name in models, as a
// link to dir, unless that name is taken: by dir itself, which is fine,
// or by another model, which is an error. It returns the model's name.
func Install(models, dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	name := filepath.Base(abs)
	link := filepath.Join(models, name)
	if _, err := os.Lstat(link); err == nil {
		have, err1 := filepath.EvalSymlinks(link)
		want, err2 := filepath.EvalSymlinks(abs)
		if err1 != nil || err2 != nil || have != want {
			return "", fmt.Errorf("%s already holds another model called %s: remove it, or rename the directory %s", models, name, abs)
		}
		return name, nil
	}
	if err := os.MkdirAll(models, 0o755); err != nil {
		return "", err
	}
	if err := os.Symlink(abs, link); err != nil && !errors.Is(err, os.ErrExist) {
		return "", fmt.Errorf("make %s available as %s: %w", abs, link, err)
	}
	return name, nil
}

// fingerprint identifies a model by its files, cheaply enough to check at
// every query: all of config.json, tokenizer.json and the weights' header,
// the weights' size, and 256 samples of 4 KiB spread over the weights,
// which fine-tuning changes throughout.
func fingerprint(config, tokenizer, weights []byte) string {
	h := sha256.New()
	for _, part := range [][]byte{config, tokenizer} {
		h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(part))))
		h.Write(part)
	}
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(weights))))
	const samples, size = 256, 4 << 10
	if len(weights) <= samples*size {
		h.Write(weights)
	} else {
		n := uint64(0)
		if len(weights) >= 8 {
			n = min(binary.LittleEndian.Uint64(weights), uint64(len(weights)-8))
		}
		h.Write(weights[:8+n])
		step := (len(weights) - size) / (samples - 1)
		for i := range samples {
			h.Write(weights[i*step : i*step+size])
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}
