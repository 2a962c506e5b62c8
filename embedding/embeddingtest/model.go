// Package embeddingtest writes tiny BERT models, in the files and formats
// of a real one, for tests that need an encoder: a few hundred word pieces,
// random weights from a fixed seed, and vectors of a few dozen dimensions.
package embeddingtest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Model describes a tiny model to write.
type Model struct {
	Hidden, Layers, Heads, Intermediate, MaxPositions int
	// Words become the vocabulary, beside the special tokens, single
	// letters and digits, and their continuation pieces.
	Words []string
	// Half writes the weights in half precision, as the real model ships.
	Half bool
	Seed uint64
}

// Default is a model of 32 dimensions, 2 layers of 4 heads.
var Default = Model{Hidden: 32, Layers: 2, Heads: 4, Intermediate: 64, MaxPositions: 512, Half: true, Seed: 1}

// DefaultWords is a small English vocabulary for tests.
var DefaultWords = strings.Fields(`the a an of to in and or is are was for on with as by
deploy deployment rollback roll back release previous restore billing charge charges failed
retry retries search index query queries knowledge memory memories compile compiler build
test tests git commit branch policy execution script scripts signed vector semantic
climate change global warming weather temperature car automobile vehicle engine
##s ##ing ##ed ##er`)

// Write writes config.json, tokenizer.json and model.safetensors to dir.
func (m Model) Write(dir string) error {
	if len(m.Words) == 0 {
		m.Words = DefaultWords
	}
	vocab := m.vocab()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	config := map[string]any{
		"model_type": "bert", "hidden_act": "gelu", "hidden_size": m.Hidden,
		"num_hidden_layers": m.Layers, "num_attention_heads": m.Heads,
		"intermediate_size": m.Intermediate, "max_position_embeddings": m.MaxPositions,
		"vocab_size": len(vocab), "type_vocab_size": 2, "layer_norm_eps": 1e-12,
	}
	if err := writeJSON(filepath.Join(dir, "config.json"), config); err != nil {
		return err
	}
	ids := map[string]int{}
	for i, t := range vocab {
		ids[t] = i
	}
	tokenizer := map[string]any{
		"version":        "1.0",
		"normalizer":     map[string]any{"type": "BertNormalizer", "clean_text": true, "handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer":  map[string]any{"type": "BertPreTokenizer"},
		"model":          map[string]any{"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": ids},
		"post_processor": nil,
	}
	if err := writeJSON(filepath.Join(dir, "tokenizer.json"), tokenizer); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "model.safetensors"), m.safetensors(len(vocab)), 0o644)
}

// vocab lists the tokens by id, the special ones where BERT has them.
func (m Model) vocab() []string {
	v := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}
	for c := 'a'; c <= 'z'; c++ {
		v = append(v, string(c), "##"+string(c))
	}
	for c := '0'; c <= '9'; c++ {
		v = append(v, string(c), "##"+string(c))
	}
	v = append(v, strings.Split(".,;:!?'\"()[]{}-_/\\*#$%&@+=<>|~`^", "")...)
	for _, w := range m.Words {
		if !slices.Contains(v, w) {
			v = append(v, w)
		}
	}
	return v
}

// safetensors lays out random weights under BERT's tensor names.
func (m Model) safetensors(vocab int) []byte {
	r := rand.New(rand.NewPCG(m.Seed, 7))
	type entry struct {
		name  string
		shape []int
		data  []float32
	}
	var entries []entry
	add := func(name string, scale float32, ones bool, shape ...int) {
		n := 1
		for _, d := range shape {
			n *= d
		}
		data := make([]float32, n)
		for i := range data {
			if ones {
				data[i] = 1 + scale*float32(r.NormFloat64())
			} else {
				data[i] = scale * float32(r.NormFloat64())
			}
		}
		entries = append(entries, entry{name, shape, data})
	}
	h, in := m.Hidden, m.Intermediate
	add("embeddings.word_embeddings.weight", 0.5, false, vocab, h)
	add("embeddings.position_embeddings.weight", 0.1, false, m.MaxPositions, h)
	add("embeddings.token_type_embeddings.weight", 0.1, false, 2, h)
	add("embeddings.LayerNorm.weight", 0.1, true, h)
	add("embeddings.LayerNorm.bias", 0.1, false, h)
	w := float32(1 / math.Sqrt(float64(h)))
	for l := range m.Layers {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		for _, x := range []string{"query", "key", "value"} {
			add(p+"attention.self."+x+".weight", w, false, h, h)
			add(p+"attention.self."+x+".bias", 0.1, false, h)
		}
		add(p+"attention.output.dense.weight", w, false, h, h)
		add(p+"attention.output.dense.bias", 0.1, false, h)
		add(p+"attention.output.LayerNorm.weight", 0.1, true, h)
		add(p+"attention.output.LayerNorm.bias", 0.1, false, h)
		add(p+"intermediate.dense.weight", w, false, in, h)
		add(p+"intermediate.dense.bias", 0.1, false, in)
		add(p+"output.dense.weight", float32(1/math.Sqrt(float64(in))), false, h, in)
		add(p+"output.dense.bias", 0.1, false, h)
		add(p+"output.LayerNorm.weight", 0.1, true, h)
		add(p+"output.LayerNorm.bias", 0.1, false, h)
	}
	header := map[string]any{"__metadata__": map[string]string{"format": "pt"}}
	var body []byte
	for _, e := range entries {
		start := len(body)
		dtype := "F32"
		for _, v := range e.data {
			if m.Half {
				dtype = "F16"
				body = binary.LittleEndian.AppendUint16(body, toHalf(v))
			} else {
				body = binary.LittleEndian.AppendUint32(body, math.Float32bits(v))
			}
		}
		header[e.name] = map[string]any{"dtype": dtype, "shape": e.shape, "data_offsets": []int{start, len(body)}}
	}
	head, _ := json.Marshal(header)
	for len(head)%8 != 0 {
		head = append(head, ' ')
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(head)))
	return append(append(out, head...), body...)
}

// toHalf rounds v to the nearest half-precision value; the weights written
// are small and normal, so no care is spent on subnormals.
func toHalf(v float32) uint16 {
	b := math.Float32bits(v)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23&0xff) - 127 + 15
	frac := b & 0x7fffff
	switch {
	case exp <= 0:
		return sign
	case exp >= 0x1f:
		return sign | 0x7c00
	}
	h := uint32(exp)<<10 | frac>>13
	if frac&0x1fff > 0x1000 || frac&0x1fff == 0x1000 && h&1 == 1 {
		h++ // round half to even; a carry into the exponent is still right
	}
	return sign | uint16(h)
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}
