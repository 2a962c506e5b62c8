package embedding

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kbqdev/kbq/artifact"
)

// int8Matrix is a rows × cols matrix of weights like a model's, in eight
// bits and interleaved.
func int8Matrix(rng *rand.Rand, rows, cols int) *matrix {
	w := &matrix{rows: rows, cols: cols, f32: make([]float32, rows*cols)}
	for i := range w.f32 {
		w.f32[i] = float32(rng.NormFloat64() * 0.05)
	}
	q := make([]byte, quantSize(rows, cols))
	w.quantize(q)
	w.setQuant(q)
	return w
}

// activations are m rows of k values like a layer's inputs, a few of
// them large.
func activations(rng *rand.Rand, m, k int) []float32 {
	a := make([]float32, m*k)
	for i := range a {
		a[i] = float32(rng.NormFloat64())
		if rng.IntN(50) == 0 {
			a[i] *= 20
		}
	}
	return a
}

// The eight-bit kernels give what dotInt8 gives, bit for bit, for every
// count of rows (tiles of four and a last tile of one, two or three rows),
// odd rows of weights, and the columns shared among goroutines.
func TestInt8KernelMatchesGo(t *testing.T) {
	if !useInt8 {
		t.Skip("the processor has no eight-bit dot products (AVX-512 VNNI)")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, k := range []int{128, 384, 1536} {
		for _, n := range []int{1, 2, 3, 64, 131} {
			w := int8Matrix(rng, n, k)
			for _, m := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 13} {
				for _, workers := range []int{1, 2} {
					a := activations(rng, m, k)
					ldc := n + 3
					c := make([]float32, m*ldc)
					w.mulTQuant(m, a, c, ldc, workers)
					acts := quantActs(m, k, a)
					for i := range m {
						for j := range n {
							if want := dotInt8(acts, i, w, j); math.Float32bits(c[i*ldc+j]) != math.Float32bits(want) {
								t.Fatalf("k=%d n=%d m=%d workers=%d: c[%d][%d] = %v, dotInt8 %v", k, n, m, workers, i, j, c[i*ldc+j], want)
							}
						}
					}
					acts.release()
				}
			}
		}
	}
}

// Eight-bit activations times eight-bit weights stay near the product of
// the activations as they are with the weights widened.
func TestInt8ProductsNearSingle(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, k := range []int{128, 384, 1536} {
		w := int8Matrix(rng, 64, k)
		m := 6
		a := activations(rng, m, k)
		acts := quantActs(m, k, a)
		widened := make([]float32, k)
		for i := range m {
			got, want := make([]float32, w.rows), make([]float32, w.rows)
			for j := range w.rows {
				got[j] = dotInt8(acts, i, w, j)
				w.dequant(j, widened)
				var s float64
				for x := range k {
					s += float64(a[i*k+x]) * float64(widened[x])
				}
				want[j] = float32(s)
			}
			if c := artifact.Cosine(got, want); c < 0.999 {
				t.Errorf("k=%d row %d: cosine %.5f with single precision, want ≥ 0.999", k, i, c)
			}
		}
		acts.release()
	}
}

// quantRowGo keeps each value within half its lane's scale, in the lane the
// kernel reads it from, and starts each lane at -128 times its sum.
func TestQuantRow(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	k := 256
	a := activations(rng, 1, k)
	clear(a[32:48]) // a lane of zeros has no scale
	q, start, scales := make([]byte, k), make([]int32, k/actGroup), make([]float32, k/actGroup)
	quantRowGo(q, start, scales, a)
	for lane := range k / actGroup {
		var sum int32
		for x := range actGroup {
			v := lane*actGroup + x
			block, l := v/dotBlock*dotBlock, lane%8
			n := int8(q[block+x/4*32+l*4+x%4])
			sum += int32(n)
			if d := math.Abs(float64(a[v]) - float64(n)*float64(scales[lane])); d > float64(scales[lane])/2*1.0001 {
				t.Fatalf("value %d: %v kept as %d × %v", v, a[v], n, scales[lane])
			}
		}
		if start[lane] != -128*sum {
			t.Errorf("lane %d starts at %d, want %d", lane, start[lane], -128*sum)
		}
	}
	if scales[2] != 0 || start[2] != 0 {
		t.Errorf("a lane of zeros: scale %v, start %d", scales[2], start[2])
	}
	// The interleaved weights hold the same bytes, plus 128, where the
	// activations' order puts them.
	src := make([]byte, dotBlock)
	for i := range src {
		src[i] = byte(i)
	}
	dst := make([]byte, dotBlock)
	interleave(dst, src)
	for v := range dotBlock {
		if got := dst[v/4%4*32+v/16*4+v%4] ^ 0x80; got != byte(v) {
			t.Fatalf("value %d interleaved as %d", v, got)
		}
	}
}

func BenchmarkInt8Matmul(b *testing.B) {
	if !useInt8 {
		b.Skip("no eight-bit dot products")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, shape := range [][2]int{{1536, 384}, {384, 1536}} {
		w := int8Matrix(rng, shape[0], shape[1])
		k, n := shape[1], shape[0]
		for _, m := range []int{2, 3, 4, 6, 7, 9, 16} {
			a, c := activations(rng, m, k), make([]float32, m*n)
			b.Run(fmt.Sprintf("%dx%d/m=%d/int8", n, k, m), func(b *testing.B) {
				for b.Loop() {
					w.mulTInt8(m, a, c, n, 1)
				}
			})
			b.Run(fmt.Sprintf("%dx%d/m=%d/widened", n, k, m), func(b *testing.B) {
				for b.Loop() {
					if m <= fusedRows {
						w.mulTFused(m, a, c, n, 1)
					} else {
						w.mulTWidened(m, a, c, n, 1)
					}
				}
			})
		}
	}
}

func BenchmarkQuantActs(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, k := range []int{384, 1536} {
		a := activations(rng, 9, k)
		b.Run(fmt.Sprint(k), func(b *testing.B) {
			for b.Loop() {
				quantActs(9, k, a).release()
			}
		})
	}
}

// The vector quantRow writes what quantRowGo writes, lanes of zeros and
// of one value included.
func TestQuantRowMatchesGo(t *testing.T) {
	if !useInt8 {
		t.Skip("the processor has no eight-bit dot products (AVX-512 VNNI)")
	}
	rng := rand.New(rand.NewPCG(9, 10))
	for _, k := range []int{128, 384, 1536} {
		a := activations(rng, 1, k)
		clear(a[16:32])
		a[48] = -3.5
		clear(a[49:64])
		lanes := k / actGroup
		q, start, scales := make([]byte, k), make([]int32, lanes), make([]float32, lanes)
		gq, gstart, gscales := make([]byte, k), make([]int32, lanes), make([]float32, lanes)
		quantRow(q, start, scales, a)
		quantRowGo(gq, gstart, gscales, a)
		for i := range q {
			if q[i] != gq[i] {
				t.Fatalf("k=%d: byte %d is %d, Go %d", k, i, int8(q[i]), int8(gq[i]))
			}
		}
		for l := range lanes {
			if start[l] != gstart[l] || math.Float32bits(scales[l]) != math.Float32bits(gscales[l]) {
				t.Fatalf("k=%d lane %d: start %d scale %v, Go %d %v", k, l, start[l], scales[l], gstart[l], gscales[l])
			}
		}
	}
}

// addInto adds every value once, in the vector part and the tail alike.
func TestAddInto(t *testing.T) {
	for n := range 21 {
		x, y := make([]float32, n), make([]float32, n)
		for i := range n {
			x[i], y[i] = float32(i)*0.1, float32(n-i)*1.7
		}
		want := make([]float32, n)
		for i := range n {
			want[i] = x[i] + y[i]
		}
		addInto(x, y)
		for i := range n {
			if math.Float32bits(x[i]) != math.Float32bits(want[i]) {
				t.Fatalf("n=%d: x[%d] = %v, want %v", n, i, x[i], want[i])
			}
		}
	}
}

// A shared step's input is rounded once: the first share to ask rounds
// it and the other gets the same rounding, released by the step; a share
// that finds it claimed but never stored (the one rounding was stopped)
// rounds its own, the same values, which it releases; unshared, the
// caller owns its rounding; and weights not in eight bits take none.
func TestSharedStepActs(t *testing.T) {
	if !useInt8 {
		t.Skip("the processor has no eight-bit dot products (AVX-512 VNNI)")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const n, k = 3, 384
	w := int8Matrix(rng, 4, k)
	x := activations(rng, n, k)
	want := quantActs(n, k, x)
	defer want.release()
	same := func(what string, a *acts8) {
		t.Helper()
		if a == nil || !slices.Equal(a.q, want.q) || !slices.Equal(a.start, want.start) || !slices.Equal(a.scales, want.scales) {
			t.Fatalf("%s: not the rounding of x", what)
		}
	}

	var s sharedStep
	first, own := s.acts(w, n, x)
	same("first share", first)
	second, own2 := s.acts(w, n, x)
	if own || own2 || second != first {
		t.Fatalf("shares got %p (own %v) and %p (own %v), want one rounding owned by the step", first, own, second, own2)
	}
	s.release()

	var stopped sharedStep
	stopped.claim.Store(true) // claimed by a share that has not stored it
	a, own := stopped.acts(w, n, x)
	same("a share whose partner stopped", a)
	if !own {
		t.Fatal("a share that rounded its own does not own it")
	}
	a.release()

	var unshared *sharedStep
	a, own = unshared.acts(w, n, x)
	same("unshared", a)
	if !own {
		t.Fatal("an unshared step's rounding is not the caller's")
	}
	a.release()

	if a, own := s.acts(&matrix{rows: 4, cols: k, f32: make([]float32, 4*k)}, n, x); a != nil || own {
		t.Fatalf("single-precision weights got a rounding (own %v)", own)
	}
}
