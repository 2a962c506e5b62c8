package embedding

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMatmul compares the products, in single and half precision, on one
// goroutine and on several, with a float64 product, over shapes that
// exercise every edge of the kernels' 3×4 tiles and of the work blocks.
func TestMatmul(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	fill := func(n int) []float32 {
		s := make([]float32, n)
		for i := range s {
			s[i] = float32(r.NormFloat64())
		}
		return s
	}
	for _, m := range []int{1, 2, 3, 4, 5, 7, 11, 100} {
		for _, n := range []int{1, 4, 5, 64, 65, 130} {
			for _, k := range []int{8, 12, 32, 384} {
				a, b := fill(m*k), fill(n*k)
				half := make([]byte, 2*n*k)
				for i, v := range b {
					binary.LittleEndian.PutUint16(half[2*i:], halfOf(v))
					b[i] = halfToFloat32(binary.LittleEndian.Uint16(half[2*i:]))
				}
				want := product64(m, n, k, a, b)
				for _, workers := range []int{1, 2} {
					single := make([]float32, m*n)
					matmulT(m, n, k, a, b, single, workers)
					w := matrix{rows: n, cols: k, f16: half}
					halves := make([]float32, m*n)
					w.mulT(m, a, halves, n, workers)
					for name, got := range map[string][]float32{"single": single, "half": halves} {
						for i := range want {
							if d := math.Abs(float64(got[i]) - want[i]); d > 1e-4*math.Sqrt(float64(k)) {
								t.Fatalf("%s m=%d n=%d k=%d workers=%d: c[%d] = %v, want %v", name, m, n, k, workers, i, got[i], want[i])
							}
						}
					}
				}
			}
		}
	}
}

// product64 is a·bᵀ in float64, a m×k and b n×k.
func product64(m, n, k int, a, b []float32) []float64 {
	c := make([]float64, m*n)
	for i := range m {
		for j := range n {
			for p := range k {
				c[i*n+j] += float64(a[i*k+p]) * float64(b[j*k+p])
			}
		}
	}
	return c
}

// halfOf rounds v toward zero to a half float; the test only needs values
// that are exactly representable.
func halfOf(v float32) uint16 {
	b := math.Float32bits(v)
	exp := int(b>>23&0xff) - 127 + 15
	if exp <= 0 || exp >= 0x1f {
		return uint16(b>>16) & 0x8000
	}
	return uint16(b>>16)&0x8000 | uint16(exp)<<10 | uint16(b>>13&0x3ff)
}

// TestHalfToFloat converts every half float with the vector path and one
// at a time, and checks a few by value.
func TestHalfToFloat(t *testing.T) {
	src := make([]byte, 2*65536)
	for i := range 65536 {
		binary.LittleEndian.PutUint16(src[2*i:], uint16(i))
	}
	dst := make([]float32, 65536)
	halfToFloat(dst, src)
	for i := range 65536 {
		want := halfToFloat32(uint16(i))
		if math.Float32bits(dst[i]) != math.Float32bits(want) && !(math.IsNaN(float64(want)) && math.IsNaN(float64(dst[i]))) {
			t.Fatalf("half %#04x: %v, one at a time %v", i, dst[i], want)
		}
	}
	for h, want := range map[uint16]float32{0x3c00: 1, 0xc000: -2, 0x7bff: 65504, 0x0001: 1.0 / (1 << 24), 0x3555: 0.33325195} {
		if got := halfToFloat32(h); got != want {
			t.Errorf("half %#04x = %v, want %v", h, got, want)
		}
	}
}

// TestFastMath holds expf to single precision over its normal range (it
// returns 0 below it, where only subnormals remain) and erff to 5e-7.
func TestFastMath(t *testing.T) {
	if expf(-100) != 0 || !math.IsInf(float64(expf(100)), 1) {
		t.Error("expf does not saturate")
	}
	for x := float32(-87); x < 88; x += 0.01 {
		want := math.Exp(float64(x))
		if got := float64(expf(x)); math.Abs(got-want) > 2e-7*want {
			t.Fatalf("expf(%v) = %v, want %v", x, got, want)
		}
	}
	for x := float32(-6); x < 6; x += 0.001 {
		if got, want := float64(erff(x)), math.Erf(float64(x)); math.Abs(got-want) > 5e-7 {
			t.Fatalf("erff(%v) = %v, want %v", x, got, want)
		}
	}
}

// TestGeluAll holds the vector gelu to the Go one, value by value, and both
// to x·Φ(x) in double precision, over the activations' range and past the
// point where erf saturates, with lengths that leave a tail for Go.
func TestGeluAll(t *testing.T) {
	var xs []float32
	for x := float32(-12); x < 12; x += 0.0007 {
		xs = append(xs, x)
	}
	xs = append(xs, 0, float32(math.Copysign(0, -1)), 1e-30, -1e-30, 1e6, -1e6)
	for _, n := range []int{len(xs), len(xs) - 3, 7} {
		got := append([]float32(nil), xs[:n]...)
		geluAll(got)
		for i, x := range xs[:n] {
			exact := float64(x) * 0.5 * (1 + math.Erf(float64(x)/math.Sqrt2))
			if d := math.Abs(float64(got[i]) - float64(gelu(x))); d > 1e-6*math.Max(1, math.Abs(float64(x))) {
				t.Fatalf("n=%d: gelu(%v) = %v, one at a time %v", n, x, got[i], gelu(x))
			}
			if d := math.Abs(float64(got[i]) - exact); d > 1e-6*math.Max(1, math.Abs(float64(x))) {
				t.Fatalf("n=%d: gelu(%v) = %v, want %v", n, x, got[i], exact)
			}
		}
	}
}

func BenchmarkMatmul(b *testing.B) {
	for _, m := range []int{16, 128} {
		k, n := 384, 1536
		a, w := make([]float32, m*k), make([]float32, n*k)
		c := make([]float32, m*n)
		half := matrix{rows: n, cols: k, f16: make([]byte, 2*n*k)}
		b.Run(fmt.Sprintf("single/m=%d", m), func(b *testing.B) {
			for b.Loop() {
				matmulT(m, n, k, a, w, c, 1)
			}
			b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
		b.Run(fmt.Sprintf("half/m=%d", m), func(b *testing.B) {
			for b.Loop() {
				half.mulT(m, a, c, n, 1)
			}
			b.ReportMetric(float64(2*m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOPS")
		})
	}
}

// TestQuantMatmul quantizes random matrices, checks that every weight
// comes back within half its group's step, and compares the eight-bit
// product, on one goroutine and on several, with a float64 product of the
// weights as quantized, over the shapes of TestMatmul.
func TestQuantMatmul(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 2, 3, 4, 5, 7, 11, 100} {
		for _, n := range []int{1, 4, 5, 64, 65, 130} {
			for _, k := range []int{32, 384} {
				a, b := make([]float32, m*k), make([]float32, n*k)
				for i := range a {
					a[i] = float32(r.NormFloat64())
				}
				for i := range b {
					b[i] = float32(r.NormFloat64())
				}
				if n > 1 {
					clear(b[k : k+quantGroup]) // a group of zeros has a scale of 0
				}
				w := matrix{rows: n, cols: k, f32: b}
				q := make([]byte, quantSize(n, k))
				w.quantize(q)
				w.setQuant(q)
				w.u8 = nil // eight-bit activations are TestInt8KernelMatchesGo's
				widened := make([]float32, n*k)
				w.dequant(0, widened)
				plain := make([]float32, n*k)
				dequantGo(plain, w.q8, w.scales)
				for i, v := range b {
					scale := math.Float32frombits(binary.LittleEndian.Uint32(w.scales[i/quantGroup*4:]))
					if widened[i] != plain[i] || math.Abs(float64(widened[i]-v)) > float64(scale)/2*1.0001 {
						t.Fatalf("n=%d k=%d: weight %d is %v, widened to %v (in Go %v), step %v", n, k, i, v, widened[i], plain[i], scale)
					}
				}
				want := product64(m, n, k, a, widened)
				for _, workers := range []int{1, 2} {
					got := make([]float32, m*n)
					w.mulT(m, a, got, n, workers)
					for i := range want {
						if d := math.Abs(float64(got[i]) - want[i]); d > 1e-4*math.Sqrt(float64(k)) {
							t.Fatalf("m=%d n=%d k=%d workers=%d: c[%d] = %v, want %v", m, n, k, workers, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// BenchmarkQuantMatmul multiplies a query's few rows by an eight-bit
// matrix of MiniLM's intermediate layer's shape, on one goroutine, with
// the weights widened in registers (fused) and widened into memory first
// (widened), the two ways mulTQuant has.
func BenchmarkQuantMatmul(b *testing.B) {
	k, n := 384, 1536
	w := matrix{rows: n, cols: k, f32: make([]float32, n*k)}
	for i := range w.f32 {
		w.f32[i] = float32(i%17) - 8
	}
	q := make([]byte, quantSize(n, k))
	w.quantize(q)
	w.setQuant(q)
	for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 12, 16} {
		a, c := make([]float32, m*k), make([]float32, m*n)
		for _, way := range []string{"fused", "widened"} {
			if way == "fused" && !useAVX2 {
				continue
			}
			b.Run(fmt.Sprintf("%s/m=%d", way, m), func(b *testing.B) {
				for b.Loop() {
					if way == "fused" {
						w.mulTFused(m, a, c, n, 1)
					} else {
						w.mulTWidened(m, a, c, n, 1)
					}
				}
			})
		}
	}
}

// layerNorm, which takes four rows side by side, gives each row the
// values it has normalised alone, bit for bit.
//
// Rows of 384 values go through the vector kernel whole, rows of 21 end in
// Go after it, and rows of 5 are all Go's.
func TestLayerNormRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, h := range []int{384, 21, 5} {
		gamma, beta := activations(rng, 1, h), activations(rng, 1, h)
		for rows := 1; rows <= 9; rows++ {
			x := activations(rng, rows, h)
			want := slices.Clone(x)
			for r := range rows {
				layerNormRow(want[r*h:(r+1)*h], gamma, beta, 1e-12)
			}
			layerNorm(x, gamma, beta, 1e-12)
			for i := range x {
				if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
					t.Fatalf("rows of %d, %d rows: value %d of row %d is %v, alone %v", h, rows, i%h, i/h, x[i], want[i])
				}
			}
		}
	}
}

// layerNormRow is layerNorm of one row, as it was written before rows
// were taken four at a time, with its products rounded as compiled
// without fused multiply-adds.
func layerNormRow(row, gamma, beta []float32, eps float32) {
	h := len(gamma)
	row = row[:h]
	var sum float32
	for _, v := range row {
		sum += v
	}
	mean := sum / float32(h)
	var sq float32
	for i, v := range row {
		d := v - mean
		row[i] = d
		sq += float32(d * d)
	}
	inv := float32(1 / math.Sqrt(float64(sq/float32(h)+eps)))
	for i, v := range row {
		row[i] = float32(float32(v*inv)*gamma[i]) + beta[i]
	}
}
