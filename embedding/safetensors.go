package embedding

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
)

// A tensor is one named array of a safetensors file.
type tensor struct {
	dtype  string // F32, F16 or BF16
	shape  []int
	data   []byte // little-endian elements, len = product(shape) * element size
	offset int    // of data in the file
}

// elements is the number of values the tensor holds.
func (t tensor) elements() int {
	n := 1
	for _, d := range t.shape {
		n *= d
	}
	return n
}

// maxHeader bounds the JSON header of a safetensors file; real ones are a
// few kilobytes per hundred tensors.
const maxHeader = 64 << 20

// parseSafetensors reads the tensors of a safetensors file held in data,
// checking that the header describes exactly the bytes that follow it. The
// tensors point into data.
func parseSafetensors(data []byte) (map[string]tensor, error) {
	if len(data) < 8 {
		return nil, fmt.Errorf("%d bytes is too short for a safetensors file", len(data))
	}
	n := binary.LittleEndian.Uint64(data)
	if n > maxHeader || n > uint64(len(data)-8) {
		return nil, fmt.Errorf("the header claims %d bytes, but the file has %d after its size", n, len(data)-8)
	}
	var header map[string]json.RawMessage
	if err := json.Unmarshal(data[8:8+n], &header); err != nil {
		return nil, fmt.Errorf("header: %v", err)
	}
	body := data[8+n:]
	tensors := make(map[string]tensor, len(header))
	type span struct {
		name       string
		start, end int
	}
	var spans []span
	for name, raw := range header {
		if name == "__metadata__" {
			continue
		}
		var h struct {
			Dtype   string   `json:"dtype"`
			Shape   []int    `json:"shape"`
			Offsets []uint64 `json:"data_offsets"`
		}
		if err := json.Unmarshal(raw, &h); err != nil {
			return nil, fmt.Errorf("tensor %s: %v", name, err)
		}
		size, ok := dtypeSize[h.Dtype]
		if !ok {
			continue // a dtype the encoder never reads, such as position ids in I64
		}
		if len(h.Offsets) != 2 || h.Offsets[0] > h.Offsets[1] || h.Offsets[1] > uint64(len(body)) {
			return nil, fmt.Errorf("tensor %s: offsets %v lie outside the %d bytes of data", name, h.Offsets, len(body))
		}
		t := tensor{dtype: h.Dtype, shape: h.Shape, data: body[h.Offsets[0]:h.Offsets[1]], offset: 8 + int(n) + int(h.Offsets[0])}
		elems := uint64(1)
		for _, d := range h.Shape {
			if d < 0 || d > math.MaxInt32 {
				return nil, fmt.Errorf("tensor %s: bad shape %v", name, h.Shape)
			}
			elems *= uint64(d)
		}
		if elems*uint64(size) != uint64(len(t.data)) {
			return nil, fmt.Errorf("tensor %s: shape %v of %s needs %d bytes, but its offsets span %d", name, h.Shape, h.Dtype, elems*uint64(size), len(t.data))
		}
		tensors[name] = t
		spans = append(spans, span{name, int(h.Offsets[0]), int(h.Offsets[1])})
	}
	// Tensors must not overlap: a header that maps two onto the same bytes
	// lies about the file.
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	for i := 1; i < len(spans); i++ {
		if spans[i].start < spans[i-1].end {
			return nil, fmt.Errorf("tensors %s and %s overlap", spans[i-1].name, spans[i].name)
		}
	}
	return tensors, nil
}

var dtypeSize = map[string]int{"F32": 4, "F16": 2, "BF16": 2}

// floats converts t to float32 values, in dst when it is large enough.
func (t tensor) floats(dst []float32) []float32 {
	n := t.elements()
	if cap(dst) < n {
		dst = make([]float32, n)
	}
	dst = dst[:n]
	switch t.dtype {
	case "F32":
		for i := range dst {
			dst[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.data[4*i:]))
		}
	case "F16":
		halfToFloat(dst, t.data)
	case "BF16":
		for i := range dst {
			dst[i] = math.Float32frombits(uint32(binary.LittleEndian.Uint16(t.data[2*i:])) << 16)
		}
	}
	return dst
}

// row converts row i of a two-dimensional tensor into dst.
func (t tensor) row(i int, dst []float32) {
	width := t.shape[len(t.shape)-1]
	size := dtypeSize[t.dtype]
	sub := tensor{dtype: t.dtype, shape: []int{width}, data: t.data[i*width*size : (i+1)*width*size]}
	sub.floats(dst)
}

// weights finds the tensors of a model by name, reporting the first one
// missing or of the wrong shape.
type weights struct {
	tensors map[string]tensor
	file    string
	err     error
}

// get returns the tensor name, which must have the shape want.
func (w *weights) get(name string, want ...int) tensor {
	if w.err != nil {
		return tensor{}
	}
	t, ok := w.tensors[name]
	if !ok {
		// Some exports prefix every name with the model's.
		t, ok = w.tensors["bert."+name]
	}
	switch {
	case !ok:
		w.err = fmt.Errorf("%s has no tensor %s: is it a BERT model?", w.file, name)
	case !slices.Equal(t.shape, want):
		w.err = fmt.Errorf("%s: tensor %s has shape %v, want %v (does config.json match the weights?)", w.file, name, t.shape, want)
	}
	return t
}

// float returns the tensor name converted to float32.
func (w *weights) float(name string, want ...int) []float32 {
	t := w.get(name, want...)
	if w.err != nil {
		return nil
	}
	return t.floats(nil)
}
