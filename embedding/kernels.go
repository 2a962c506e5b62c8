package embedding

import (
	"encoding/binary"
	"iter"
	"math"
	"runtime"
	"sync"
)

// A matrix holds a linear layer's weights, one output per row as PyTorch
// stores them: in single precision, as the little-endian half floats of a
// mapped weights file, which the kernels widen as they read them, or in
// eight bits (quant.go).
type matrix struct {
	rows, cols int
	f32        []float32
	f16        []byte
	q8         []byte // int8 weights, when set the ones multiplied by
	scales     []byte // their groups' scales, little-endian float32s
	u8         []byte // q8 interleaved for eight-bit activations (int8.go)
}

// rowsOf is the matrix of m's rows [r0, r1), sharing its weights.
func (m *matrix) rowsOf(r0, r1 int) matrix {
	k := m.cols
	out := matrix{rows: r1 - r0, cols: k}
	switch {
	case m.q8 != nil:
		out.q8 = m.q8[r0*k : r1*k]
		out.scales = m.scales[r0*k/quantGroup*4 : r1*k/quantGroup*4]
		if m.u8 != nil {
			out.u8 = m.u8[r0*k : r1*k]
		}
	case m.f32 != nil:
		out.f32 = m.f32[r0*k : r1*k]
	default:
		out.f16 = m.f16[r0*k*2 : r1*k*2]
	}
	return out
}

// mulT sets c = a·wᵀ for the m rows of a (w.cols values each); rows of c
// are ldc apart. With workers > 1 the columns of c are shared among
// goroutines.
func (w *matrix) mulT(m int, a []float32, c []float32, ldc int, workers int) {
	if w.q8 != nil {
		w.mulTQuant(m, a, c, ldc, workers)
		return
	}
	if w.f32 != nil {
		matmulTStrided(m, w.rows, w.cols, a, w.cols, w.f32, w.cols, c, ldc, workers)
		return
	}
	k := w.cols
	_ = a[m*k-1]
	_ = w.f16[w.rows*k*2-1]
	_ = c[(m-1)*ldc+w.rows-1]
	columns(m, w.rows, k, workers, func(j0, j1 int) {
		j := j0
		if useAVX2 && hasF16C() && k%8 == 0 {
			for ; j+4 <= j1; j += 4 {
				for i := range tiles(m) {
					kernel3x4h(k, &a[i*k], k, &w.f16[j*k*2], k, &c[i*ldc+j], ldc)
				}
				if m < 3 {
					w.plain(0, m, j, j+4, a, c, ldc)
				}
			}
		}
		w.plain(0, m, j, j1, a, c, ldc)
	})
}

// plain computes rows [i0, i1) and columns [j0, j1) of a·wᵀ in Go.
func (w *matrix) plain(i0, i1, j0, j1 int, a, c []float32, ldc int) {
	if i0 >= i1 || j0 >= j1 {
		return
	}
	k := w.cols
	row := make([]float32, k)
	for j := j0; j < j1; j++ {
		halfToFloat(row, w.f16[j*k*2:(j+1)*k*2])
		for i := i0; i < i1; i++ {
			c[i*ldc+j] = dot(a[i*k:(i+1)*k], row)
		}
	}
}

// matmulT sets c = a·bᵀ: a is m×k, b is n×k and c is m×n, all row-major and
// packed.
func matmulT(m, n, k int, a, b, c []float32, workers int) {
	matmulTStrided(m, n, k, a, k, b, k, c, n, workers)
}

// matmulTStrided is matmulT over rows lda, ldb and ldc elements apart.
func matmulTStrided(m, n, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int, workers int) {
	if m == 0 || n == 0 {
		return
	}
	_ = a[(m-1)*lda+k-1]
	_ = b[(n-1)*ldb+k-1]
	_ = c[(m-1)*ldc+n-1]
	columns(m, n, k, workers, func(j0, j1 int) {
		gemmBlock(m, j0, j1, k, a, lda, b, ldb, c, ldc)
	})
}

// columns calls block over the n columns of an m×n product with inner
// dimension k, in blocks shared among workers goroutines; small products
// stay on the caller's.
func columns(m, n, k, workers int, block func(j0, j1 int)) {
	const width = 64 // a multiple of the kernels' four columns
	if workers <= 1 || m*n*k < 1<<18 || n <= width {
		block(0, n)
		return
	}
	var wg sync.WaitGroup
	next := make(chan int, (n+width-1)/width)
	for j := 0; j < n; j += width {
		next <- j
	}
	close(next)
	for range min(workers, (n+width-1)/width) {
		wg.Go(func() {
			for j := range next {
				block(j, min(j+width, n))
			}
		})
	}
	wg.Wait()
}

// gemmBlock computes columns [j0, j1) of c.
func gemmBlock(m, j0, j1, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	j := j0
	if useAVX2 && k%8 == 0 && k > 0 {
		for ; j+4 <= j1; j += 4 {
			for i := range tiles(m) {
				kernel3x4(k, &a[i*lda], lda, &b[j*ldb], ldb, &c[i*ldc+j], ldc)
			}
			if m < 3 {
				gemmPlain(0, m, j, j+4, k, a, lda, b, ldb, c, ldc)
			}
		}
	}
	gemmPlain(0, m, j, j1, k, a, lda, b, ldb, c, ldc)
}

// tiles yields the first rows of the three-row tiles that cover m rows:
// when m is not a multiple of three, the last tile overlaps the one before
// and writes the same values again, which keeps every row in the vector
// kernel. Fewer than three rows make no tile.
func tiles(m int) iter.Seq[int] {
	return func(yield func(int) bool) {
		if m < 3 {
			return
		}
		for i := 0; i+3 <= m; i += 3 {
			if !yield(i) {
				return
			}
		}
		if m%3 != 0 {
			yield(m - 3)
		}
	}
}

// gemmPlain computes rows [i0, i1) and columns [j0, j1) of c in Go.
func gemmPlain(i0, i1, j0, j1, k int, a []float32, lda int, b []float32, ldb int, c []float32, ldc int) {
	for i := i0; i < i1; i++ {
		ar := a[i*lda : i*lda+k]
		for j := j0; j < j1; j++ {
			c[i*ldc+j] = dot(ar, b[j*ldb:j*ldb+k])
		}
	}
}

// dot is the inner product of x and y, which have the same length, summed
// in eight lanes as the vector kernel sums it.
func dot(x, y []float32) float32 {
	y = y[:len(x)]
	var s [8]float32
	i := 0
	for ; i+8 <= len(x); i += 8 {
		xs, ys := x[i:i+8:i+8], y[i:i+8:i+8]
		s[0] += xs[0] * ys[0]
		s[1] += xs[1] * ys[1]
		s[2] += xs[2] * ys[2]
		s[3] += xs[3] * ys[3]
		s[4] += xs[4] * ys[4]
		s[5] += xs[5] * ys[5]
		s[6] += xs[6] * ys[6]
		s[7] += xs[7] * ys[7]
	}
	for ; i < len(x); i++ {
		s[i&7] += x[i] * y[i]
	}
	return (s[0] + s[1]) + (s[2] + s[3]) + (s[4] + s[5]) + (s[6] + s[7])
}

// halfToFloat converts the little-endian IEEE half-precision values of src
// into dst.
func halfToFloat(dst []float32, src []byte) {
	n := min(len(dst), len(src)/2)
	i := 0
	if n >= 8 && hasF16C() {
		i = n &^ 7
		halfToFloatF16C(&dst[0], &src[0], i)
	}
	for ; i < n; i++ {
		dst[i] = halfToFloat32(binary.LittleEndian.Uint16(src[2*i:]))
	}
}

// halfToFloat32 widens one half-precision value exactly.
func halfToFloat32(h uint16) float32 {
	sign := uint32(h>>15) << 31
	exp := uint32(h>>10) & 0x1f
	frac := uint32(h) & 0x3ff
	switch {
	case exp == 0x1f: // infinities and NaNs
		return math.Float32frombits(sign | 0xff<<23 | frac<<13)
	case exp != 0:
		return math.Float32frombits(sign | (exp+127-15)<<23 | frac<<13)
	case frac == 0:
		return math.Float32frombits(sign)
	}
	// Subnormal: a value of frac × 2⁻²⁴.
	f := float32(frac) * (1.0 / (1 << 24))
	if sign != 0 {
		f = -f
	}
	return f
}

// parallelism is how many goroutines a batch of work may use.
func parallelism() int { return runtime.GOMAXPROCS(0) }
