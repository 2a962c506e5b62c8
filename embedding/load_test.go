package embedding

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/embedding/embeddingtest"
)

// TestLoadBadModels: every broken model directory is an error that names
// the file and says what is wrong with it.
func TestLoadBadModels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(dir string) error
		want  string
	}{
		{"no config", func(dir string) error { return os.Remove(filepath.Join(dir, "config.json")) }, "config.json is missing"},
		{"no tokenizer", func(dir string) error { return os.Remove(filepath.Join(dir, "tokenizer.json")) }, "tokenizer.json is missing"},
		{"no weights", func(dir string) error { return os.Remove(filepath.Join(dir, "model.safetensors")) }, "holds no weights"},
		{"truncated weights", func(dir string) error {
			p := filepath.Join(dir, "model.safetensors")
			fi, err := os.Stat(p)
			if err != nil {
				return err
			}
			return os.Truncate(p, fi.Size()-100)
		}, "model.safetensors: tensor "},
		{"header larger than the file", func(dir string) error {
			p := filepath.Join(dir, "model.safetensors")
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			binary.LittleEndian.PutUint64(data, uint64(len(data)))
			return os.WriteFile(p, data, 0o644)
		}, "the header claims"},
		{"header lying about a shape", func(dir string) error {
			return rewriteHeader(dir, `"shape":[32]`, `"shape":[33]`)
		}, "needs 66 bytes, but its offsets span 64"},
		{"header lying about offsets", func(dir string) error {
			return rewriteHeader(dir, `"data_offsets":[0,`, `"data_offsets":[2,`)
		}, "model.safetensors: tensor"},
		{"tiny file", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "model.safetensors"), []byte{1, 2}, 0o644)
		}, "too short for a safetensors file"},
		{"BPE tokenizer", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "tokenizer.json"), []byte(`{"model": {"type": "BPE"}}`), 0o644)
		}, "tokenizer.json: the tokenizer is BPE"},
		{"config of another kind", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"model_type": "t5"}`), 0o644)
		}, `config.json: model_type is "t5"`},
		{"config not matching the weights", func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64, "max_position_embeddings": 512, "vocab_size": 193, "layer_norm_eps": 1e-12}`), 0o644)
		}, "does config.json match the weights?"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := embeddingtest.Default.Write(dir); err != nil {
				t.Fatal(err)
			}
			if err := tc.spoil(dir); err != nil {
				t.Fatal(err)
			}
			e, err := Load(dir)
			if err == nil {
				e.Close()
				t.Fatal("loaded")
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want one containing %q", err, tc.want)
			}
			if !strings.Contains(err.Error(), dir) {
				t.Errorf("error %q does not name the directory", err)
			}
		})
	}
}

// rewriteHeader replaces the first old in the safetensors header, keeping
// its length.
func rewriteHeader(dir, old, new string) error {
	p := filepath.Join(dir, "model.safetensors")
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	n := binary.LittleEndian.Uint64(data)
	head := strings.Replace(string(data[8:8+n]), old, new, 1)
	if len(head) > int(n) {
		head = strings.Replace(head, "  ", "", 1) // padding keeps the size
	}
	for len(head) < int(n) {
		head += " "
	}
	copy(data[8:], head)
	return os.WriteFile(p, data, 0o644)
}

// TestHostileText: empty, punctuation only, a megabyte, invalid UTF-8.
func TestHostileText(t *testing.T) {
	dir := t.TempDir()
	if err := embeddingtest.Default.Write(dir); err != nil {
		t.Fatal(err)
	}
	e, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	texts := []string{"", "?!.,;", strings.Repeat("deploy the release, ", 50_000), "\ufeff\xff\xfe\xfd", "\x00\x01\x02"}
	vecs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if c := artifact.Cosine(v, v); c < 0.999 || c > 1.001 {
			t.Errorf("%.20q: |v|² = %v, want a unit vector", texts[i], c)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := e.Embed(ctx, texts); err == nil {
		t.Error("a cancelled embedding succeeded")
	}
}

func FuzzSafetensors(f *testing.F) {
	dir := f.TempDir()
	if err := embeddingtest.Default.Write(dir); err != nil {
		f.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "model.safetensors"))
	if err != nil {
		f.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(data)
	f.Add(data[:8+n+64])
	f.Add([]byte("\x10\x00\x00\x00\x00\x00\x00\x00{\"a\":{\"dtype\":\"F32\"}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tensors, err := parseSafetensors(data)
		if err != nil {
			return
		}
		for _, tn := range tensors {
			tn.floats(nil) // must stay within the data
		}
	})
}

// TestInstall links a model directory into the models directory by its
// name, again without complaint, and refuses another model of that name.
func TestInstall(t *testing.T) {
	models, dir, other := t.TempDir(), filepath.Join(t.TempDir(), "tiny"), filepath.Join(t.TempDir(), "tiny")
	for _, d := range []string{dir, other} {
		if err := embeddingtest.Default.Write(d); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		if name, err := Install(models, dir); err != nil || name != "tiny" {
			t.Fatalf("Install: %q, %v", name, err)
		}
	}
	if found, err := Find(models, "tiny"); err != nil || found != filepath.Join(models, "tiny") {
		t.Fatalf("Find: %q, %v", found, err)
	}
	if _, err := Install(models, other); err == nil || !strings.Contains(err.Error(), "already holds another model called tiny") {
		t.Errorf("a second model of the same name: %v", err)
	}
}

// TestLoadCache: the load cache gives the encoder the model's own
// tokenizer and fingerprint, follows the model's files when they change,
// and is rebuilt, never trusted, when it is damaged.
func TestLoadCache(t *testing.T) {
	dir := t.TempDir()
	if err := embeddingtest.Default.Write(dir); err != nil {
		t.Fatal(err)
	}
	embedWith := func(load func(string) (*Encoder, error)) ([]float32, string) {
		t.Helper()
		e, err := load(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		v, err := e.Embed(context.Background(), []string{"the release of the service"})
		if err != nil {
			t.Fatal(err)
		}
		return v[0], e.Info().Hash
	}
	embed := func() ([]float32, string) { return embedWith(Load) }
	fresh, hash := embed()
	if _, err := os.Stat(filepath.Join(dir, CacheFile)); err != nil {
		t.Fatalf("no cache after a load: %v", err)
	}
	freshQuant, _ := embedWith(LoadQuantized)
	if slices.Equal(freshQuant, fresh) || artifact.Cosine(freshQuant, fresh) < 0.999 {
		t.Errorf("eight-bit weights: cosine %.6f with the weights as they are, want below 1 and ≥ 0.999", artifact.Cosine(freshQuant, fresh))
	}
	// What the cache gives is exactly what the model's files give.
	same := func(what string) {
		t.Helper()
		v, h := embed()
		q, _ := embedWith(LoadQuantized)
		if h != hash || !slices.Equal(v, fresh) || !slices.Equal(q, freshQuant) {
			t.Errorf("%s: hash %s, cosines %.6f and %.6f; want %s and the same vectors", what, h, artifact.Cosine(v, fresh), artifact.Cosine(q, freshQuant), hash)
		}
	}
	same("from the cache")

	// Garbage, a cut, and a cache of another model are all rebuilt.
	cache := filepath.Join(dir, CacheFile)
	good, err := os.ReadFile(cache)
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string][]byte{
		"garbage":    []byte(strings.Repeat("x", 100)),
		"cut":        good[:len(good)/2],
		"lying size": append(append([]byte(nil), good[:len(good)-len(good)/3]...), 0xff, 0xff, 0xff, 0x7f),
	} {
		if err := os.WriteFile(cache, bad, 0o644); err != nil {
			t.Fatal(err)
		}
		same(name)
	}

	// A cache that places a tensor outside the weights is rebuilt, as is
	// one whose numbers do not fit the model.
	var key cacheKey
	c, unmap, err := readCache(dir, key, bertConfig{})
	if err == nil {
		unmap()
		t.Fatal("a cache of another key was read")
	}
	for name, spoil := range map[string]func(*cached){
		"tensor outside the weights": func(c *cached) { c.table.refs[3].offset = math.MaxInt32 },
		"unknown dtype":              func(c *cached) { c.table.refs[0].dtype = "I8" },
		"floats missing":             func(c *cached) { c.table.floats = c.table.floats[1:] },
		"weights missing":            func(c *cached) { c.quant = c.quant[1:] },
	} {
		if err := os.WriteFile(cache, good, 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := findFiles(dir)
		if err != nil {
			t.Fatal(err)
		}
		c, unmap, err = readCache(dir, f.key, f.cfg)
		if err != nil {
			t.Fatalf("the cache written by Load does not read: %v", err)
		}
		c.table.refs = slices.Clone(c.table.refs)
		spoil(&c)
		writeCache(dir, f.key, c)
		unmap()
		same(name)
	}

	// A changed tokenizer is read again: here one that knows no words.
	tok := filepath.Join(dir, TokenizerFile)
	data, err := os.ReadFile(tok)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(data), `"release"`, `"relea5e"`, 1)
	if changed == string(data) {
		t.Fatal("the tiny tokenizer has no word release")
	}
	if err := os.WriteFile(tok, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if v, h := embed(); h == hash || artifact.Cosine(v, fresh) > 0.9999 {
		t.Errorf("after the tokenizer changed: hash %s (was %s), cosine %.6f: the stale cache was used", h, hash, artifact.Cosine(v, fresh))
	}

	// A directory the process cannot write loads without a cache.
	if os.Geteuid() != 0 {
		os.Remove(cache)
		os.Chmod(dir, 0o555)
		defer os.Chmod(dir, 0o755)
		embed()
		if _, err := os.Stat(cache); err == nil {
			t.Error("a cache was written into a read-only directory")
		}
	}
}

// TestVocabTable: the table finds what it holds and nothing else, and a
// table whose numbers point outside it finds nothing instead of failing.
func TestVocabTable(t *testing.T) {
	var tokens []string
	var ids []int32
	for i := range 1000 {
		tokens = append(tokens, fmt.Sprintf("w%d", i))
		ids = append(ids, int32(i))
	}
	v, err := buildVocab(tokens, ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, tok := range tokens {
		if id, ok := v.lookup(tok); !ok || id != ids[i] {
			t.Fatalf("%s: %d %v", tok, id, ok)
		}
	}
	if _, ok := v.lookup("w1000"); ok {
		t.Error("found a token the table does not hold")
	}
	damaged := append([]byte(nil), v.data...)
	for i := 8; i < len(damaged); i += 7 {
		damaged[i] = 0xff
	}
	if d, err := openVocab(damaged); err == nil {
		for _, tok := range tokens {
			d.lookup(tok) // must not panic
		}
	}
	for _, bad := range [][]byte{nil, {1, 0, 0, 0, 3, 0, 0, 0}, v.data[:len(v.data)/2]} {
		if _, err := openVocab(bad); err == nil {
			t.Errorf("a table of %d bytes opened", len(bad))
		}
	}
}
