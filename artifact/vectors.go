package artifact

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// VectorsFile holds an index's chunk vectors, one per chunk in the order
// of the manifest's documents and of each document's chunks.
const VectorsFile = "vectors"

// vectorsMagic starts a vectors file; the digits are its layout's version.
const vectorsMagic = "KBQVEC01"

// Embeddings says how an index's vectors were made: a query must be
// embedded by the same model to be compared with them.
type Embeddings struct {
	// Provider is "local" (kbq's own encoder) or "openai" (an
	// OpenAI-compatible endpoint).
	Provider string `json:"provider"`
	// Model names the model: a local model's directory name, or the
	// endpoint's model.
	Model string `json:"model"`
	// Hash identifies a local model's files (embedding.Info.Hash).
	Hash string `json:"hash,omitempty"`
	// URL is an endpoint's base, where kbq embeds queries too.
	URL string `json:"url,omitempty"`
	// KeyEnv names the environment variable that holds the endpoint's key,
	// when the configuration names one.
	KeyEnv string `json:"key_env,omitempty"`
	// Dims is the length of the vectors.
	Dims int `json:"dims"`
	// Quantization is how vectors are stored: "int8", each with a scale.
	Quantization string `json:"quantization"`
}

// Same reports whether vectors made as e and as o can be compared.
func (e Embeddings) Same(o Embeddings) bool {
	return e.Provider == o.Provider && e.Model == o.Model && e.Hash == o.Hash && e.URL == o.URL && e.Dims == o.Dims
}

// Quantize stores v as int8 values with one scale (the largest magnitude
// over 127), appending scale and values to dst: a quarter of the size of
// float32.
func Quantize(dst []byte, v []float32) []byte {
	var hi float32
	for _, x := range v {
		hi = max(hi, float32(math.Abs(float64(x))))
	}
	scale := hi / 127
	dst = binary.LittleEndian.AppendUint32(dst, math.Float32bits(scale))
	if scale == 0 {
		return append(dst, make([]byte, len(v))...)
	}
	inv := 1 / scale
	for _, x := range v {
		dst = append(dst, byte(int8(math.Round(float64(x*inv)))))
	}
	return dst
}

// VectorWriter writes a vectors file.
type VectorWriter struct {
	w    io.Writer
	dims int
	buf  []byte
}

// NewVectorWriter starts a vectors file of count vectors of dims values.
func NewVectorWriter(w io.Writer, dims, count int) (*VectorWriter, error) {
	head := make([]byte, 0, 16)
	head = append(head, vectorsMagic...)
	head = binary.LittleEndian.AppendUint32(head, uint32(dims))
	head = binary.LittleEndian.AppendUint32(head, uint32(count))
	_, err := w.Write(head)
	return &VectorWriter{w: w, dims: dims}, err
}

// Add writes one vector.
func (vw *VectorWriter) Add(v []float32) error {
	if len(v) != vw.dims {
		return fmt.Errorf("a vector of %d values in a file of %d", len(v), vw.dims)
	}
	vw.buf = Quantize(vw.buf[:0], v)
	_, err := vw.w.Write(vw.buf)
	return err
}

// AddQuantized writes a vector as another file stored it.
func (vw *VectorWriter) AddQuantized(row []byte) error {
	if len(row) != 4+vw.dims {
		return fmt.Errorf("a stored vector of %d bytes in a file of %d values", len(row), vw.dims)
	}
	_, err := vw.w.Write(row)
	return err
}

// Vectors reads a vectors file held in memory.
type Vectors struct {
	Dims, Count int
	data        []byte
}

// ErrVectors means a vectors file is not what its header says.
var ErrVectors = errors.New("corrupt vectors file")

// ParseVectors checks the header of a vectors file and returns its reader.
func ParseVectors(data []byte) (*Vectors, error) {
	if len(data) < 16 || string(data[:8]) != vectorsMagic {
		return nil, fmt.Errorf("%w: no header", ErrVectors)
	}
	v := &Vectors{Dims: int(binary.LittleEndian.Uint32(data[8:])), Count: int(binary.LittleEndian.Uint32(data[12:]))}
	if v.Dims <= 0 || v.Dims > 1<<16 || uint64(len(data)-16) != uint64(v.Count)*uint64(4+v.Dims) {
		return nil, fmt.Errorf("%w: %d vectors of %d values do not fill %d bytes", ErrVectors, v.Count, v.Dims, len(data)-16)
	}
	v.data = data[16:]
	return v, nil
}

// Row returns vector i as stored: its scale, then its int8 values.
func (v *Vectors) Row(i int) []byte {
	size := 4 + v.Dims
	return v.data[i*size : (i+1)*size : (i+1)*size]
}

// Dot is the inner product of q with stored vector i.
func (v *Vectors) Dot(q []float32, i int) float32 {
	row := v.Row(i)
	scale := math.Float32frombits(binary.LittleEndian.Uint32(row))
	vals := row[4:]
	q = q[:len(vals)]
	var s0, s1, s2, s3 float32
	j := 0
	for ; j+4 <= len(vals); j += 4 {
		s0 += q[j] * float32(int8(vals[j]))
		s1 += q[j+1] * float32(int8(vals[j+1]))
		s2 += q[j+2] * float32(int8(vals[j+2]))
		s3 += q[j+3] * float32(int8(vals[j+3]))
	}
	for ; j < len(vals); j++ {
		s0 += q[j] * float32(int8(vals[j]))
	}
	return scale * ((s0 + s1) + (s2 + s3))
}
