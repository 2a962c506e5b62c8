package embedding

import (
	"encoding/binary"
	"math"
	"sync"
)

// quantGroup is how many consecutive weights of a row share one scale in
// eight-bit form. Over the reference texts, all-MiniLM-L6-v2's vectors
// keep a cosine of at least 0.9995 with the reference engine's in groups
// of 32, 0.9993 in groups of 64, and 0.996 with a scale per row.
const quantGroup = 32

// quantizable reports whether a matrix of cols columns has an eight-bit
// form: its rows must fall into whole groups.
func quantizable(cols int) bool { return cols > 0 && cols%quantGroup == 0 }

// quantSize is the bytes of a rows × cols matrix's eight-bit form: the
// weights, a byte each, then one little-endian float32 scale per group,
// then, when the rows are whole blocks of the eight-bit kernel, the
// weights again in its order (interleave).
func quantSize(rows, cols int) int {
	n := rows*cols + rows*cols/quantGroup*4
	if interleavable(cols) {
		n += rows * cols
	}
	return n
}

// quantize writes the eight-bit form of m into dst, quantSize bytes: each
// group of a row is stored as the integers nearest its weights divided by
// the group's scale, the largest magnitude in the group over 127.
func (m *matrix) quantize(dst []byte) {
	k := m.cols
	n := m.rows * k
	q, scales := dst[:n], dst[n:n+n/quantGroup*4]
	row := make([]float32, k)
	for r := range m.rows {
		if m.f32 != nil {
			copy(row, m.f32[r*k:(r+1)*k])
		} else {
			halfToFloat(row, m.f16[r*k*2:(r+1)*k*2])
		}
		for g := 0; g < k; g += quantGroup {
			group := row[g : g+quantGroup]
			var largest float32
			for _, v := range group {
				largest = max(largest, v, -v)
			}
			scale := largest / 127
			binary.LittleEndian.PutUint32(scales[(r*k+g)/quantGroup*4:], math.Float32bits(scale))
			out := q[r*k+g : r*k+g+quantGroup]
			if scale == 0 {
				clear(out)
				continue
			}
			for i, v := range group {
				out[i] = byte(int8(max(-127, min(127, math.Round(float64(v/scale))))))
			}
		}
	}
	if interleavable(k) {
		interleave(dst[n+n/quantGroup*4:quantSize(m.rows, k)], q)
	}
}

// setQuant points m at its eight-bit form in b, as quantize wrote it.
func (m *matrix) setQuant(b []byte) {
	n := m.rows * m.cols
	end := n + n/quantGroup*4
	m.q8, m.scales = b[:n:n], b[n:end:end]
	if interleavable(m.cols) {
		m.u8 = b[end:quantSize(m.rows, m.cols)]
	}
}

// matrices are a layer's matrices in the order the cache keeps them.
func (l *bertLayer) matrices() []*matrix {
	return []*matrix{&l.query, &l.key, &l.value, &l.attnOut, &l.inter, &l.out}
}

// quantLayers is the eight-bit form of every quantizable matrix of layers,
// one after the other, made on all cores.
func quantLayers(layers []bertLayer) []byte {
	var ms []*matrix
	var offsets []int
	size := 0
	for i := range layers {
		for _, m := range layers[i].matrices() {
			if quantizable(m.cols) {
				ms = append(ms, m)
				offsets = append(offsets, size)
				size += quantSize(m.rows, m.cols)
			}
		}
	}
	b := make([]byte, size)
	next := make(chan int, len(ms))
	for i := range ms {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range min(parallelism(), len(ms)) {
		wg.Go(func() {
			for i := range next {
				ms[i].quantize(b[offsets[i]:])
			}
		})
	}
	wg.Wait()
	return b
}

// quantLayersSize is the length of quantLayers for a model of cfg.
func quantLayersSize(cfg bertConfig) int {
	h, in := cfg.Hidden, cfg.Intermediate
	per := 0
	for _, s := range [][2]int{{h, h}, {h, h}, {h, h}, {h, h}, {in, h}, {h, in}} {
		if quantizable(s[1]) {
			per += quantSize(s[0], s[1])
		}
	}
	return per * cfg.Layers
}

// useQuant makes the encoder multiply by the eight-bit forms in b, which
// quantLayers made.
func (e *Encoder) useQuant(b []byte) {
	for i := range e.layers {
		for _, m := range e.layers[i].matrices() {
			if quantizable(m.cols) {
				size := quantSize(m.rows, m.cols)
				m.setQuant(b[:size])
				b = b[size:]
			}
		}
	}
}

// dequant converts rows [r0, r0+len(dst)/cols) of m's eight-bit form into
// dst.
func (m *matrix) dequant(r0 int, dst []float32) {
	k := m.cols
	src := m.q8[r0*k : r0*k+len(dst)]
	scales := m.scales[r0*k/quantGroup*4 : (r0*k+len(dst))/quantGroup*4]
	if useAVX2 && len(dst) > 0 {
		dequantAVX2(&dst[0], &src[0], &scales[0], len(dst))
		return
	}
	dequantGo(dst, src, scales)
}

// dequantGo widens the int8 weights src, a group of quantGroup to each
// little-endian float32 in scales, into dst.
func dequantGo(dst []float32, src, scales []byte) {
	for g := 0; g < len(dst); g += quantGroup {
		scale := math.Float32frombits(binary.LittleEndian.Uint32(scales[g/quantGroup*4:]))
		for i := g; i < g+quantGroup; i++ {
			dst[i] = float32(int8(src[i])) * scale
		}
	}
}

// tilePool holds the widened rows of an eight-bit matrix that a block of
// its product works on.
var tilePool sync.Pool

// fusedRows is the most rows of a that mulTQuant multiplies with weights
// widened in registers as they are read, rather than widened into memory
// once for all rows. A query of one or two words is three or four tokens:
// the widening path's 3×4 tiles take four rows as two overlapping tiles,
// and fewer than three rows in Go, while the fused kernel takes four rows
// at the cost of four. From five rows on, the widened weights' reuse
// pays for their trip through memory (BenchmarkQuantMatmul: at four rows
// 61 µs fused against 85 µs widened, at five 120 against 85).
const fusedRows = 4

// mulTQuant is mulT for a matrix in eight bits. Short inputs, a query's
// tokens, are multiplied by weights widened in registers (mulTFused);
// longer ones widen four rows of weights at a time into single precision
// and multiply every row of a by them, so that each weight is widened
// once per product.
func (w *matrix) mulTQuant(m int, a []float32, c []float32, ldc int, workers int) {
	k := w.cols
	_ = a[m*k-1]
	_ = c[(m-1)*ldc+w.rows-1]
	if useInt8 && w.u8 != nil {
		w.mulTInt8(m, a, c, ldc, workers)
		return
	}
	if m <= fusedRows && useAVX2 && k%quantGroup == 0 {
		w.mulTFused(m, a, c, ldc, workers)
		return
	}
	w.mulTWidened(m, a, c, ldc, workers)
}

// mulTWidened is mulTQuant with four rows of weights at a time widened
// into memory.
func (w *matrix) mulTWidened(m int, a []float32, c []float32, ldc int, workers int) {
	k := w.cols
	columns(m, w.rows, k, workers, func(j0, j1 int) {
		p, _ := tilePool.Get().(*[]float32)
		if p == nil || cap(*p) < 4*k {
			s := make([]float32, 4*k)
			p = &s
		}
		defer tilePool.Put(p)
		for j := j0; j < j1; j += 4 {
			r := min(4, j1-j)
			b := (*p)[:r*k]
			w.dequant(j, b)
			if r == 4 && useAVX2 && k%8 == 0 {
				for i := range tiles(m) {
					kernel3x4(k, &a[i*k], k, &b[0], k, &c[i*ldc+j], ldc)
				}
				if m >= 3 {
					continue
				}
			}
			gemmPlain(0, m, 0, r, k, a, k, b, k, c[j:], ldc)
		}
	})
}

// fusedPool holds mulTFused's rows of a and of c, padded to a multiple of
// four rows.
var fusedPool sync.Pool

// mulTFused is mulTQuant with the weights widened in registers by
// kernelQ4x2, four rows of a against two rows of weights at a time; the
// rows of a are padded with zeros to a multiple of four, and a last odd
// row of weights is multiplied in Go.
func (w *matrix) mulTFused(m int, a []float32, c []float32, ldc int, workers int) {
	k, n := w.cols, w.rows
	mp := (m + 3) &^ 3
	p, _ := fusedPool.Get().(*[]float32)
	if p == nil || cap(*p) < mp*(k+n) {
		s := make([]float32, mp*(k+n))
		p = &s
	}
	defer fusedPool.Put(p)
	ap, cp := (*p)[:mp*k], (*p)[mp*k:mp*(k+n)]
	copy(ap, a[:m*k])
	clear(ap[m*k:])
	columns(mp, n, k, workers, func(j0, j1 int) {
		j := j0
		for ; j+2 <= j1; j += 2 {
			for i := 0; i < mp; i += 4 {
				kernelQ4x2(k, &ap[i*k], k, &w.q8[j*k], &w.scales[j*k/quantGroup*4], &cp[i*n+j], n)
			}
		}
		if j < j1 { // one row of weights left
			row := make([]float32, k)
			w.dequant(j, row)
			for i := range m {
				cp[i*n+j] = dot(ap[i*k:(i+1)*k], row)
			}
		}
	})
	for i := range m {
		copy(c[i*ldc:i*ldc+n], cp[i*n:(i+1)*n])
	}
}
