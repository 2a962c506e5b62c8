package embedding

import (
	"sync"

	"golang.org/x/sys/cpu"
)

// The vector kernels need AVX2 and FMA; every processor with both also
// converts half floats (F16C), which cpuidF16C confirms when the first
// model is read rather than at start-up: kbq links this package, and
// CPUID traps to the hypervisor in a virtual machine.
var (
	useAVX2 = cpu.X86.HasAVX2 && cpu.X86.HasFMA
	hasF16C = sync.OnceValue(func() bool { return useAVX2 && cpuidF16C() })
	// useInt8 says the processor has eight-bit dot products (int8.go).
	useInt8 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512VL && cpu.X86.HasAVX512VNNI
)

// kernel3x4 sets the 3×4 block of c at c to the products of the three rows
// of a at a with the four rows of b at b, over k values, k a multiple of 8.
// Strides are in elements.
//
//go:noescape
func kernel3x4(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)

// kernel3x4h is kernel3x4 with b in half precision.
//
//go:noescape
func kernel3x4h(k int, a *float32, lda int, b *byte, ldb int, c *float32, ldc int)

// halfToFloatF16C converts n half floats at src, n a multiple of 8.
//
//go:noescape
func halfToFloatF16C(dst *float32, src *byte, n int)

// dequantAVX2 widens n int8 weights at src, n a multiple of 32, each group
// of 32 multiplied by its float32 scale at scales.
//
//go:noescape
func dequantAVX2(dst *float32, src *byte, scales *byte, n int)

// kernelQ4x2 sets c[i*ldc+j], i < 4 and j < 2, to the products of the four
// rows of a at a (lda apart) with the two rows of an eight-bit matrix at
// w, k bytes apart, their groups' scales at scales (k/32 floats a row),
// widened as they are read; k is a multiple of 32.
//
//go:noescape
func kernelQ4x2(k int, a *float32, lda int, w *byte, scales *byte, c *float32, ldc int)

// kernelInt8x4x2 sets c[i*ldc+j], i < 4 and j < 2, to the products of
// the four rows of eight-bit activations at a (k bytes apart; their lanes'
// starts and scales at start and scales, k/16 apart) with the two rows of
// interleaved weights at w (k bytes apart; their groups' scales at
// wscales, k/32 floats a row), as dotInt8 computes them; k is a multiple
// of 128. It does so for pairs > 0 pairs of rows of weights, one after
// the other from w, into the columns from c on.
//
//go:noescape
func kernelInt8x4x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int)

// kernelInt8x3x2 is kernelInt8x4x2 for three rows of activations.
//
//go:noescape
func kernelInt8x3x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int)

// kernelInt8x2x2 is kernelInt8x4x2 for two rows of activations.
//
//go:noescape
func kernelInt8x2x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int)

// kernelInt8x1x2 is kernelInt8x4x2 for one row of activations, into
// c[0], c[1] and the pairs' columns after.
//
//go:noescape
func kernelInt8x1x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, pairs int)

// quantLanesAVX512 is quantRow for the first lanes lanes of a row, lanes
// a multiple of 8.
//
//go:noescape
func quantLanesAVX512(q *byte, start *int32, scales *float32, a *float32, lanes int)

// normalizeAVX2 sets each of the n values v at x, n a multiple of 8, to
// ((v - mean)·inv)·g + b, g and b the values at gamma and beta, each
// operation rounded (scaleShift).
//
//go:noescape
func normalizeAVX2(x *float32, n int, mean, inv float32, gamma, beta *float32)

// addAVX2 adds the n values at y to those at x, n a multiple of 8.
//
//go:noescape
func addAVX2(x *float32, y *float32, n int)

// geluAVX2 applies gelu to the n values at x, n a multiple of 8.
//
//go:noescape
func geluAVX2(x *float32, n int)

// cpuidF16C reports whether the processor converts half floats.
func cpuidF16C() bool
