package embedding

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"
)

// A table says where an encoder finds its weights: the small tensors
// (token type, norms and biases) widened to float32, and where the large
// ones lie in the weights file. Load reads it from the weights' header the
// first time and keeps it in the cache, so that a warm start neither
// parses the header nor reads the small tensors, which lie on a page each
// among the large ones: that took 2 to 3 ms of a query's 15.
type table struct {
	floats []float32   // in the order tableOf appends them
	refs   []tensorRef // word and position vectors, then each layer's matrices
}

// A tensorRef locates a tensor in the weights file.
type tensorRef struct {
	offset int
	dtype  string
}

// tableFloats is the number of floats in the table of a model of cfg.
func tableFloats(cfg bertConfig) int {
	h := cfg.Hidden
	return 3*h + cfg.Layers*(9*h+cfg.Intermediate)
}

// tableRefs is the number of tensors the table of a model of cfg locates.
func tableRefs(cfg bertConfig) int { return 2 + 6*cfg.Layers }

// tableOf makes the table of a model of cfg from its tensors, checking
// that they are all there with the shapes cfg gives.
func tableOf(cfg bertConfig, tensors map[string]tensor, file string) (table, error) {
	w := &weights{tensors: tensors, file: file}
	h, in := cfg.Hidden, cfg.Intermediate
	var t table
	ref := func(name string, rows, cols int) {
		x := w.get(name, rows, cols)
		t.refs = append(t.refs, tensorRef{x.offset, x.dtype})
	}
	add := func(name string, want ...int) {
		t.floats = append(t.floats, w.float(name, want...)...)
	}
	// Older exports call a layer norm's weight and bias gamma and beta.
	norm := func(prefix string) {
		if _, ok := w.tensors[prefix+".gamma"]; ok {
			add(prefix+".gamma", h)
			add(prefix+".beta", h)
			return
		}
		add(prefix+".weight", h)
		add(prefix+".bias", h)
	}
	ref("embeddings.word_embeddings.weight", cfg.Vocab, h)
	ref("embeddings.position_embeddings.weight", cfg.MaxPositions, h)
	if typ := w.float("embeddings.token_type_embeddings.weight", max(cfg.TypeVocab, 1), h); typ != nil {
		t.floats = append(t.floats, typ[:h]...) // every token is of type 0
	}
	norm("embeddings.LayerNorm")
	for l := range cfg.Layers {
		p := fmt.Sprintf("encoder.layer.%d.", l)
		for _, name := range []string{"query", "key", "value"} {
			ref(p+"attention.self."+name+".weight", h, h)
			add(p+"attention.self."+name+".bias", h)
		}
		ref(p+"attention.output.dense.weight", h, h)
		add(p+"attention.output.dense.bias", h)
		norm(p + "attention.output.LayerNorm")
		ref(p+"intermediate.dense.weight", in, h)
		add(p+"intermediate.dense.bias", in)
		ref(p+"output.dense.weight", h, in)
		add(p+"output.dense.bias", h)
		norm(p + "output.LayerNorm")
	}
	return t, w.err
}

// encoder builds an encoder of cfg over the weights file raw, as t
// describes it.
func (t table) encoder(cfg bertConfig, tok *Tokenizer, raw []byte) (*Encoder, error) {
	if len(t.floats) != tableFloats(cfg) || len(t.refs) != tableRefs(cfg) {
		return nil, fmt.Errorf("a table of %d floats and %d tensors does not fit the model", len(t.floats), len(t.refs))
	}
	var err error
	refs := t.refs
	get := func(rows, cols int) tensor {
		r := refs[0]
		refs = refs[1:]
		size, ok := dtypeSize[r.dtype]
		end := r.offset + rows*cols*size
		if !ok || r.offset < 0 || end < r.offset || end > len(raw) {
			err = fmt.Errorf("tensor of %s at %d lies outside the %d bytes of weights", r.dtype, r.offset, len(raw))
			return tensor{}
		}
		return tensor{dtype: r.dtype, shape: []int{rows, cols}, data: raw[r.offset:end:end], offset: r.offset}
	}
	matrix := func(rows, cols int) matrix {
		x := get(rows, cols)
		m := matrix{rows: rows, cols: cols}
		if x.dtype == "F16" {
			m.f16 = x.data
		} else if x.data != nil {
			m.f32 = x.floats(nil)
		}
		return m
	}
	floats := t.floats
	take := func(n int) []float32 {
		s := floats[:n:n]
		floats = floats[n:]
		return s
	}
	h, in := cfg.Hidden, cfg.Intermediate
	e := &Encoder{
		cfg:       cfg,
		tok:       tok,
		maxTokens: min(MaxTokens, cfg.MaxPositions),
		words:     get(cfg.Vocab, h),
		pos:       get(cfg.MaxPositions, h),
		typ:       take(h),
		embNorm:   normParams{take(h), take(h)},
	}
	e.layers = make([]bertLayer, cfg.Layers)
	for i := range e.layers {
		l := &e.layers[i]
		l.qkvBias = take(3 * h)
		l.query, l.key, l.value = matrix(h, h), matrix(h, h), matrix(h, h)
		l.attnOut = matrix(h, h)
		l.attnOutBias = take(h)
		l.attnNorm = normParams{take(h), take(h)}
		l.inter = matrix(in, h)
		l.interBias = take(in)
		l.out = matrix(h, in)
		l.outBias = take(h)
		l.outNorm = normParams{take(h), take(h)}
	}
	if err != nil {
		return nil, err
	}
	// Ids past the word vectors are unknown words: the vocabulary of a
	// damaged cache must not index outside them.
	tok.limit = int32(cfg.Vocab)
	return e, nil
}

// appendRefs appends t's tensor locations: an offset and a dtype each.
func (t table) appendRefs(b []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.refs)))
	for _, r := range t.refs {
		b = binary.LittleEndian.AppendUint64(b, uint64(r.offset))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(r.dtype)))
		b = append(b, r.dtype...)
	}
	return b
}

// appendFloats appends t's floats, little-endian.
func (t table) appendFloats(b []byte) []byte {
	for _, f := range t.floats {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
	}
	return b
}

// littleEndian is whether the machine stores numbers as the cache does.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1

// floatsOf reads little-endian float32s: in place where the machine is
// little-endian and b is aligned, as a mapped cache's are.
func floatsOf(b []byte) []float32 {
	n := len(b) / 4
	if n == 0 {
		return nil
	}
	if littleEndian && uintptr(unsafe.Pointer(&b[0]))%4 == 0 {
		return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n)
	}
	f := make([]float32, n)
	for i := range f {
		f[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return f
}
