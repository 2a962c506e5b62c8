#include "textflag.h"

// func kernel3x4(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int)
//
// Twelve accumulators, one per output: Y0–Y3 for row 0 of a against rows
// 0–3 of b, Y4–Y7 for row 1, Y8–Y11 for row 2. Each step loads eight
// values of the three rows of a once and of each row of b once: seven loads
// for twelve fused multiply-adds.
TEXT ·kernel3x4(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	SHLQ $2, CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R9
	SHLQ $2, R9
	LEAQ (DI)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	LEAQ (R13)(R9*1), BX

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ AX, AX

loop:
	VMOVUPS (SI)(AX*1), Y12
	VMOVUPS (R10)(AX*1), Y13
	VMOVUPS (R11)(AX*1), Y14

	VMOVUPS (DI)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8

	VMOVUPS (R12)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9

	VMOVUPS (R13)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10

	VMOVUPS (BX)(AX*1), Y15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11

	ADDQ $32, AX
	CMPQ AX, CX
	JLT  loop

	// Sum each accumulator's eight lanes: two rounds of pairwise adds
	// within 128-bit halves leave row r's four sums split across the
	// halves, which the last add joins.
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8

	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVUPS X0, (DX)

	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS X5, X4, X4
	VMOVUPS X4, (DX)(R8*1)

	VHADDPS Y9, Y8, Y8
	VHADDPS Y11, Y10, Y10
	VHADDPS Y10, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VMOVUPS X8, (DX)(R8*2)

	VZEROUPPER
	RET

// func kernel3x4h(k int, a *float32, lda int, b *byte, ldb int, c *float32, ldc int)
//
// kernel3x4 with the rows of b in half precision, widened as they are
// loaded; DX steps through b at half the pace AX steps through a.
TEXT ·kernel3x4h(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	SHLQ $2, CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R8
	SHLQ $2, R8
	LEAQ (SI)(R8*1), R10
	LEAQ (R10)(R8*1), R11
	MOVQ b+24(FP), DI
	MOVQ ldb+32(FP), R9
	SHLQ $1, R9
	LEAQ (DI)(R9*1), R12
	LEAQ (R12)(R9*1), R13
	LEAQ (R13)(R9*1), BX

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11
	XORQ AX, AX
	XORQ DX, DX

looph:
	VMOVUPS (SI)(AX*1), Y12
	VMOVUPS (R10)(AX*1), Y13
	VMOVUPS (R11)(AX*1), Y14

	VCVTPH2PS (DI)(DX*1), Y15
	VFMADD231PS Y15, Y12, Y0
	VFMADD231PS Y15, Y13, Y4
	VFMADD231PS Y15, Y14, Y8

	VCVTPH2PS (R12)(DX*1), Y15
	VFMADD231PS Y15, Y12, Y1
	VFMADD231PS Y15, Y13, Y5
	VFMADD231PS Y15, Y14, Y9

	VCVTPH2PS (R13)(DX*1), Y15
	VFMADD231PS Y15, Y12, Y2
	VFMADD231PS Y15, Y13, Y6
	VFMADD231PS Y15, Y14, Y10

	VCVTPH2PS (BX)(DX*1), Y15
	VFMADD231PS Y15, Y12, Y3
	VFMADD231PS Y15, Y13, Y7
	VFMADD231PS Y15, Y14, Y11

	ADDQ $32, AX
	ADDQ $16, DX
	CMPQ AX, CX
	JLT  looph

	// Sum each accumulator's eight lanes: two rounds of pairwise adds
	// within 128-bit halves leave row r's four sums split across the
	// halves, which the last add joins.
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8

	VHADDPS Y1, Y0, Y0
	VHADDPS Y3, Y2, Y2
	VHADDPS Y2, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS X1, X0, X0
	VMOVUPS X0, (DX)

	VHADDPS Y5, Y4, Y4
	VHADDPS Y7, Y6, Y6
	VHADDPS Y6, Y4, Y4
	VEXTRACTF128 $1, Y4, X5
	VADDPS X5, X4, X4
	VMOVUPS X4, (DX)(R8*1)

	VHADDPS Y9, Y8, Y8
	VHADDPS Y11, Y10, Y10
	VHADDPS Y10, Y8, Y8
	VEXTRACTF128 $1, Y8, X9
	VADDPS X9, X8, X8
	VMOVUPS X8, (DX)(R8*2)

	VZEROUPPER
	RET

// func halfToFloatF16C(dst *float32, src *byte, n int)
TEXT ·halfToFloatF16C(SB), NOSPLIT, $0-24
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	XORQ AX, AX

cvt:
	VCVTPH2PS (SI)(AX*2), Y0
	VMOVUPS   Y0, (DI)(AX*4)
	ADDQ $8, AX
	CMPQ AX, CX
	JLT  cvt

	VZEROUPPER
	RET

// func dequantAVX2(dst *float32, src *byte, scales *byte, n int)
//
// Each round widens one group: 32 bytes sign-extended to 32-bit integers
// eight at a time, converted, and multiplied by the group's scale.
TEXT ·dequantAVX2(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ scales+16(FP), DX
	MOVQ n+24(FP), CX

group:
	VBROADCASTSS (DX), Y0
	VPMOVSXBD    (SI), Y1
	VPMOVSXBD    8(SI), Y2
	VPMOVSXBD    16(SI), Y3
	VPMOVSXBD    24(SI), Y4
	VCVTDQ2PS    Y1, Y1
	VCVTDQ2PS    Y2, Y2
	VCVTDQ2PS    Y3, Y3
	VCVTDQ2PS    Y4, Y4
	VMULPS       Y0, Y1, Y1
	VMULPS       Y0, Y2, Y2
	VMULPS       Y0, Y3, Y3
	VMULPS       Y0, Y4, Y4
	VMOVUPS      Y1, (DI)
	VMOVUPS      Y2, 32(DI)
	VMOVUPS      Y3, 64(DI)
	VMOVUPS      Y4, 96(DI)
	ADDQ $32, SI
	ADDQ $128, DI
	ADDQ $4, DX
	SUBQ $32, CX
	JNZ  group

	VZEROUPPER
	RET

// func cpuidF16C() bool
TEXT ·cpuidF16C(SB), NOSPLIT, $0-1
	MOVL $1, AX
	XORL CX, CX
	CPUID
	SHRL $29, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)
	RET

// QCHUNK multiplies eight weights of each of the two rows, at byte W of
// the group, into the four rows of a, at byte A: sign-extended,
// converted and scaled (Y8, Y9), then into the accumulators.
#define QCHUNK(W, A) \
	VPMOVSXBD W(DI), Y10 \
	VPMOVSXBD W(DI)(R8*1), Y11 \
	VCVTDQ2PS Y10, Y10 \
	VCVTDQ2PS Y11, Y11 \
	VMULPS    Y8, Y10, Y10 \
	VMULPS    Y9, Y11, Y11 \
	VMOVUPS   A(SI), Y12 \
	VFMADD231PS Y10, Y12, Y0 \
	VFMADD231PS Y11, Y12, Y4 \
	VMOVUPS   A(SI)(R10*1), Y13 \
	VFMADD231PS Y10, Y13, Y1 \
	VFMADD231PS Y11, Y13, Y5 \
	VMOVUPS   A(SI)(R10*2), Y14 \
	VFMADD231PS Y10, Y14, Y2 \
	VFMADD231PS Y11, Y14, Y6 \
	VMOVUPS   A(SI)(R11*1), Y15 \
	VFMADD231PS Y10, Y15, Y3 \
	VFMADD231PS Y11, Y15, Y7

// func kernelQ4x2(k int, a *float32, lda int, w *byte, scales *byte, c *float32, ldc int)
//
// Four rows of a against two rows of an eight-bit matrix, widened as they
// are read: eight accumulators, Y0–Y3 for the first weight row against
// rows 0–3 of a, Y4–Y7 for the second. Each round takes one group of 32
// weights of each row: the group's scale is broadcast once, each eight
// weights are sign-extended, converted and scaled, then multiplied into
// the four rows of a, read straight from memory. k is a multiple of 32;
// the weight rows are k bytes apart and their scales k/32 floats apart.
TEXT ·kernelQ4x2(SB), NOSPLIT, $0-56
	MOVQ k+0(FP), CX
	SHLQ $2, CX
	MOVQ a+8(FP), SI
	MOVQ lda+16(FP), R10
	SHLQ $2, R10
	LEAQ (R10)(R10*2), R11
	MOVQ w+24(FP), DI
	MOVQ k+0(FP), R8
	MOVQ scales+32(FP), BX
	MOVQ R8, R9
	SHRQ $3, R9
	ADDQ SI, CX

	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

qgroup:
	VBROADCASTSS (BX), Y8
	VBROADCASTSS (BX)(R9*1), Y9
	QCHUNK(0, 0)
	QCHUNK(8, 32)
	QCHUNK(16, 64)
	QCHUNK(24, 96)

	ADDQ $32, DI
	ADDQ $4, BX
	ADDQ $128, SI
	CMPQ SI, CX
	JLT  qgroup

	// Row i of a against the two weight rows: Y(i) and Y(4+i) summed
	// pairwise within halves, two rows of a at a time, and the halves
	// joined: the four sums of rows i and i+1, stored two by two.
	MOVQ c+40(FP), DX
	MOVQ ldc+48(FP), R8
	SHLQ $2, R8

	VHADDPS Y4, Y0, Y0
	VHADDPS Y5, Y1, Y1
	VHADDPS Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X8
	VADDPS X8, X0, X0
	VMOVLPS X0, (DX)
	VMOVHPS X0, (DX)(R8*1)

	LEAQ (DX)(R8*2), DX
	VHADDPS Y6, Y2, Y2
	VHADDPS Y7, Y3, Y3
	VHADDPS Y3, Y2, Y2
	VEXTRACTF128 $1, Y2, X8
	VADDPS X8, X2, X2
	VMOVLPS X2, (DX)
	VMOVHPS X2, (DX)(R8*1)

	VZEROUPPER
	RET

// func geluAVX2(x *float32, n int)
//
// gelu over n values at x, n a multiple of 8, eight at a time, as the Go
// gelu computes each: erf by Abramowitz and Stegun 7.1.26, its exponential
// by Cephes' expf reduced to 2^n·e^r, n added to the exponent bits.
TEXT ·geluAVX2(SB), NOSPLIT, $0-16
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VMOVUPS geluOne<>(SB), Y11
	VMOVUPS geluAbs<>(SB), Y12
	VMOVUPS geluSign<>(SB), Y13
	VMOVUPS geluHalf<>(SB), Y14

gelu:
	VMOVUPS (DI), Y0
	VMULPS  geluInvSqrt2<>(SB), Y0, Y1 // u = x/√2
	VANDPS  Y12, Y1, Y2
	VMINPS  geluFour<>(SB), Y2, Y2     // a = min(|u|, 4)

	VMOVAPS Y11, Y3
	VFMADD231PS geluP<>(SB), Y2, Y3    // 1 + p·a
	VDIVPS  Y3, Y11, Y4                // t

	VMOVUPS geluA5<>(SB), Y5
	VFMADD213PS geluA4<>(SB), Y4, Y5
	VFMADD213PS geluA3<>(SB), Y4, Y5
	VFMADD213PS geluA2<>(SB), Y4, Y5
	VFMADD213PS geluA1<>(SB), Y4, Y5
	VMULPS  Y4, Y5, Y5                 // the polynomial in t

	VMULPS  Y2, Y2, Y6
	VXORPS  Y13, Y6, Y6                // z = -a²
	VMULPS  geluLog2e<>(SB), Y6, Y7
	VADDPS  Y14, Y7, Y7
	VROUNDPS $1, Y7, Y7                // n = floor(z·log2 e + 1/2)
	VFNMADD231PS geluLn2hi<>(SB), Y7, Y6
	VFNMADD231PS geluLn2lo<>(SB), Y7, Y6 // r = z - n·ln 2
	VMOVUPS geluE0<>(SB), Y8
	VFMADD213PS geluE1<>(SB), Y6, Y8
	VFMADD213PS geluE2<>(SB), Y6, Y8
	VFMADD213PS geluE3<>(SB), Y6, Y8
	VFMADD213PS geluE4<>(SB), Y6, Y8
	VFMADD213PS geluE5<>(SB), Y6, Y8
	VMULPS  Y6, Y6, Y9
	VFMADD213PS Y6, Y9, Y8             // p·r² + r
	VADDPS  Y11, Y8, Y8                // e^r
	VCVTPS2DQ Y7, Y7
	VPSLLD  $23, Y7, Y7
	VPADDD  Y7, Y8, Y8                 // e^z = 2^n·e^r

	VFNMADD213PS Y11, Y8, Y5           // erf(|u|) = 1 - poly·e^z
	VANDPS  Y13, Y1, Y10
	VXORPS  Y10, Y5, Y5                // with u's sign
	VADDPS  Y11, Y5, Y5
	VMULPS  Y0, Y5, Y5
	VMULPS  Y14, Y5, Y5                // x·(1 + erf(u))/2
	VMOVUPS Y5, (DI)

	ADDQ $32, DI
	SUBQ $8, CX
	JNZ  gelu

	VZEROUPPER
	RET

// The constants of geluAVX2, eight copies each.
DATA geluInvSqrt2<>+0(SB)/4, $0x3f3504f3
DATA geluInvSqrt2<>+4(SB)/4, $0x3f3504f3
DATA geluInvSqrt2<>+8(SB)/4, $0x3f3504f3
DATA geluInvSqrt2<>+12(SB)/4, $0x3f3504f3
DATA geluInvSqrt2<>+16(SB)/4, $0x3f3504f3
DATA geluInvSqrt2<>+20(SB)/4, $0x3f3504f3
DATA geluInvSqrt2<>+24(SB)/4, $0x3f3504f3
DATA geluInvSqrt2<>+28(SB)/4, $0x3f3504f3
GLOBL geluInvSqrt2<>(SB), RODATA|NOPTR, $32
DATA geluP<>+0(SB)/4, $0x3ea7ba05
DATA geluP<>+4(SB)/4, $0x3ea7ba05
DATA geluP<>+8(SB)/4, $0x3ea7ba05
DATA geluP<>+12(SB)/4, $0x3ea7ba05
DATA geluP<>+16(SB)/4, $0x3ea7ba05
DATA geluP<>+20(SB)/4, $0x3ea7ba05
DATA geluP<>+24(SB)/4, $0x3ea7ba05
DATA geluP<>+28(SB)/4, $0x3ea7ba05
GLOBL geluP<>(SB), RODATA|NOPTR, $32
DATA geluFour<>+0(SB)/4, $0x40800000
DATA geluFour<>+4(SB)/4, $0x40800000
DATA geluFour<>+8(SB)/4, $0x40800000
DATA geluFour<>+12(SB)/4, $0x40800000
DATA geluFour<>+16(SB)/4, $0x40800000
DATA geluFour<>+20(SB)/4, $0x40800000
DATA geluFour<>+24(SB)/4, $0x40800000
DATA geluFour<>+28(SB)/4, $0x40800000
GLOBL geluFour<>(SB), RODATA|NOPTR, $32
DATA geluA1<>+0(SB)/4, $0x3e827906
DATA geluA1<>+4(SB)/4, $0x3e827906
DATA geluA1<>+8(SB)/4, $0x3e827906
DATA geluA1<>+12(SB)/4, $0x3e827906
DATA geluA1<>+16(SB)/4, $0x3e827906
DATA geluA1<>+20(SB)/4, $0x3e827906
DATA geluA1<>+24(SB)/4, $0x3e827906
DATA geluA1<>+28(SB)/4, $0x3e827906
GLOBL geluA1<>(SB), RODATA|NOPTR, $32
DATA geluA2<>+0(SB)/4, $0xbe91a98e
DATA geluA2<>+4(SB)/4, $0xbe91a98e
DATA geluA2<>+8(SB)/4, $0xbe91a98e
DATA geluA2<>+12(SB)/4, $0xbe91a98e
DATA geluA2<>+16(SB)/4, $0xbe91a98e
DATA geluA2<>+20(SB)/4, $0xbe91a98e
DATA geluA2<>+24(SB)/4, $0xbe91a98e
DATA geluA2<>+28(SB)/4, $0xbe91a98e
GLOBL geluA2<>(SB), RODATA|NOPTR, $32
DATA geluA3<>+0(SB)/4, $0x3fb5f0e3
DATA geluA3<>+4(SB)/4, $0x3fb5f0e3
DATA geluA3<>+8(SB)/4, $0x3fb5f0e3
DATA geluA3<>+12(SB)/4, $0x3fb5f0e3
DATA geluA3<>+16(SB)/4, $0x3fb5f0e3
DATA geluA3<>+20(SB)/4, $0x3fb5f0e3
DATA geluA3<>+24(SB)/4, $0x3fb5f0e3
DATA geluA3<>+28(SB)/4, $0x3fb5f0e3
GLOBL geluA3<>(SB), RODATA|NOPTR, $32
DATA geluA4<>+0(SB)/4, $0xbfba00e3
DATA geluA4<>+4(SB)/4, $0xbfba00e3
DATA geluA4<>+8(SB)/4, $0xbfba00e3
DATA geluA4<>+12(SB)/4, $0xbfba00e3
DATA geluA4<>+16(SB)/4, $0xbfba00e3
DATA geluA4<>+20(SB)/4, $0xbfba00e3
DATA geluA4<>+24(SB)/4, $0xbfba00e3
DATA geluA4<>+28(SB)/4, $0xbfba00e3
GLOBL geluA4<>(SB), RODATA|NOPTR, $32
DATA geluA5<>+0(SB)/4, $0x3f87dc22
DATA geluA5<>+4(SB)/4, $0x3f87dc22
DATA geluA5<>+8(SB)/4, $0x3f87dc22
DATA geluA5<>+12(SB)/4, $0x3f87dc22
DATA geluA5<>+16(SB)/4, $0x3f87dc22
DATA geluA5<>+20(SB)/4, $0x3f87dc22
DATA geluA5<>+24(SB)/4, $0x3f87dc22
DATA geluA5<>+28(SB)/4, $0x3f87dc22
GLOBL geluA5<>(SB), RODATA|NOPTR, $32
DATA geluLog2e<>+0(SB)/4, $0x3fb8aa3b
DATA geluLog2e<>+4(SB)/4, $0x3fb8aa3b
DATA geluLog2e<>+8(SB)/4, $0x3fb8aa3b
DATA geluLog2e<>+12(SB)/4, $0x3fb8aa3b
DATA geluLog2e<>+16(SB)/4, $0x3fb8aa3b
DATA geluLog2e<>+20(SB)/4, $0x3fb8aa3b
DATA geluLog2e<>+24(SB)/4, $0x3fb8aa3b
DATA geluLog2e<>+28(SB)/4, $0x3fb8aa3b
GLOBL geluLog2e<>(SB), RODATA|NOPTR, $32
DATA geluLn2hi<>+0(SB)/4, $0x3f318000
DATA geluLn2hi<>+4(SB)/4, $0x3f318000
DATA geluLn2hi<>+8(SB)/4, $0x3f318000
DATA geluLn2hi<>+12(SB)/4, $0x3f318000
DATA geluLn2hi<>+16(SB)/4, $0x3f318000
DATA geluLn2hi<>+20(SB)/4, $0x3f318000
DATA geluLn2hi<>+24(SB)/4, $0x3f318000
DATA geluLn2hi<>+28(SB)/4, $0x3f318000
GLOBL geluLn2hi<>(SB), RODATA|NOPTR, $32
DATA geluLn2lo<>+0(SB)/4, $0xb95e8083
DATA geluLn2lo<>+4(SB)/4, $0xb95e8083
DATA geluLn2lo<>+8(SB)/4, $0xb95e8083
DATA geluLn2lo<>+12(SB)/4, $0xb95e8083
DATA geluLn2lo<>+16(SB)/4, $0xb95e8083
DATA geluLn2lo<>+20(SB)/4, $0xb95e8083
DATA geluLn2lo<>+24(SB)/4, $0xb95e8083
DATA geluLn2lo<>+28(SB)/4, $0xb95e8083
GLOBL geluLn2lo<>(SB), RODATA|NOPTR, $32
DATA geluE0<>+0(SB)/4, $0x39506967
DATA geluE0<>+4(SB)/4, $0x39506967
DATA geluE0<>+8(SB)/4, $0x39506967
DATA geluE0<>+12(SB)/4, $0x39506967
DATA geluE0<>+16(SB)/4, $0x39506967
DATA geluE0<>+20(SB)/4, $0x39506967
DATA geluE0<>+24(SB)/4, $0x39506967
DATA geluE0<>+28(SB)/4, $0x39506967
GLOBL geluE0<>(SB), RODATA|NOPTR, $32
DATA geluE1<>+0(SB)/4, $0x3ab743ce
DATA geluE1<>+4(SB)/4, $0x3ab743ce
DATA geluE1<>+8(SB)/4, $0x3ab743ce
DATA geluE1<>+12(SB)/4, $0x3ab743ce
DATA geluE1<>+16(SB)/4, $0x3ab743ce
DATA geluE1<>+20(SB)/4, $0x3ab743ce
DATA geluE1<>+24(SB)/4, $0x3ab743ce
DATA geluE1<>+28(SB)/4, $0x3ab743ce
GLOBL geluE1<>(SB), RODATA|NOPTR, $32
DATA geluE2<>+0(SB)/4, $0x3c088908
DATA geluE2<>+4(SB)/4, $0x3c088908
DATA geluE2<>+8(SB)/4, $0x3c088908
DATA geluE2<>+12(SB)/4, $0x3c088908
DATA geluE2<>+16(SB)/4, $0x3c088908
DATA geluE2<>+20(SB)/4, $0x3c088908
DATA geluE2<>+24(SB)/4, $0x3c088908
DATA geluE2<>+28(SB)/4, $0x3c088908
GLOBL geluE2<>(SB), RODATA|NOPTR, $32
DATA geluE3<>+0(SB)/4, $0x3d2aa9c1
DATA geluE3<>+4(SB)/4, $0x3d2aa9c1
DATA geluE3<>+8(SB)/4, $0x3d2aa9c1
DATA geluE3<>+12(SB)/4, $0x3d2aa9c1
DATA geluE3<>+16(SB)/4, $0x3d2aa9c1
DATA geluE3<>+20(SB)/4, $0x3d2aa9c1
DATA geluE3<>+24(SB)/4, $0x3d2aa9c1
DATA geluE3<>+28(SB)/4, $0x3d2aa9c1
GLOBL geluE3<>(SB), RODATA|NOPTR, $32
DATA geluE4<>+0(SB)/4, $0x3e2aaaaa
DATA geluE4<>+4(SB)/4, $0x3e2aaaaa
DATA geluE4<>+8(SB)/4, $0x3e2aaaaa
DATA geluE4<>+12(SB)/4, $0x3e2aaaaa
DATA geluE4<>+16(SB)/4, $0x3e2aaaaa
DATA geluE4<>+20(SB)/4, $0x3e2aaaaa
DATA geluE4<>+24(SB)/4, $0x3e2aaaaa
DATA geluE4<>+28(SB)/4, $0x3e2aaaaa
GLOBL geluE4<>(SB), RODATA|NOPTR, $32
DATA geluE5<>+0(SB)/4, $0x3f000000
DATA geluE5<>+4(SB)/4, $0x3f000000
DATA geluE5<>+8(SB)/4, $0x3f000000
DATA geluE5<>+12(SB)/4, $0x3f000000
DATA geluE5<>+16(SB)/4, $0x3f000000
DATA geluE5<>+20(SB)/4, $0x3f000000
DATA geluE5<>+24(SB)/4, $0x3f000000
DATA geluE5<>+28(SB)/4, $0x3f000000
GLOBL geluE5<>(SB), RODATA|NOPTR, $32
DATA geluHalf<>+0(SB)/4, $0x3f000000
DATA geluHalf<>+4(SB)/4, $0x3f000000
DATA geluHalf<>+8(SB)/4, $0x3f000000
DATA geluHalf<>+12(SB)/4, $0x3f000000
DATA geluHalf<>+16(SB)/4, $0x3f000000
DATA geluHalf<>+20(SB)/4, $0x3f000000
DATA geluHalf<>+24(SB)/4, $0x3f000000
DATA geluHalf<>+28(SB)/4, $0x3f000000
GLOBL geluHalf<>(SB), RODATA|NOPTR, $32
DATA geluOne<>+0(SB)/4, $0x3f800000
DATA geluOne<>+4(SB)/4, $0x3f800000
DATA geluOne<>+8(SB)/4, $0x3f800000
DATA geluOne<>+12(SB)/4, $0x3f800000
DATA geluOne<>+16(SB)/4, $0x3f800000
DATA geluOne<>+20(SB)/4, $0x3f800000
DATA geluOne<>+24(SB)/4, $0x3f800000
DATA geluOne<>+28(SB)/4, $0x3f800000
GLOBL geluOne<>(SB), RODATA|NOPTR, $32
DATA geluAbs<>+0(SB)/4, $0x7fffffff
DATA geluAbs<>+4(SB)/4, $0x7fffffff
DATA geluAbs<>+8(SB)/4, $0x7fffffff
DATA geluAbs<>+12(SB)/4, $0x7fffffff
DATA geluAbs<>+16(SB)/4, $0x7fffffff
DATA geluAbs<>+20(SB)/4, $0x7fffffff
DATA geluAbs<>+24(SB)/4, $0x7fffffff
DATA geluAbs<>+28(SB)/4, $0x7fffffff
GLOBL geluAbs<>(SB), RODATA|NOPTR, $32
DATA geluSign<>+0(SB)/4, $0x80000000
DATA geluSign<>+4(SB)/4, $0x80000000
DATA geluSign<>+8(SB)/4, $0x80000000
DATA geluSign<>+12(SB)/4, $0x80000000
DATA geluSign<>+16(SB)/4, $0x80000000
DATA geluSign<>+20(SB)/4, $0x80000000
DATA geluSign<>+24(SB)/4, $0x80000000
DATA geluSign<>+28(SB)/4, $0x80000000
GLOBL geluSign<>(SB), RODATA|NOPTR, $32

// The lanes of a block's four weight groups: lane l takes group l/2.
DATA int8Groups<>+0(SB)/4, $0
DATA int8Groups<>+4(SB)/4, $0
DATA int8Groups<>+8(SB)/4, $1
DATA int8Groups<>+12(SB)/4, $1
DATA int8Groups<>+16(SB)/4, $2
DATA int8Groups<>+20(SB)/4, $2
DATA int8Groups<>+24(SB)/4, $3
DATA int8Groups<>+28(SB)/4, $3
GLOBL int8Groups<>(SB), RODATA|NOPTR, $32

// The eight-bit kernels' shared steps: INT8ARGS loads what holds for all
// the pairs of rows of weights, INT8PAIR what a pair starts from (CX the
// blocks, R11 the bytes between the weight rows' scales, R12 between the
// activation rows' lanes), INT8PREFETCH asks for the block two pairs on
// (AX), INT8WSCALES spreads the block's weight scales over the lanes,
// INT8ADVANCE moves to the next block, INT8SUMS and INT8ROWSUMS write the
// rows' sums (ldc·4 in R8), and INT8NEXT moves to the next pair. A block's
// step loads 32 bytes of the two weight rows (INT8WEIGHTS) and adds each
// row of activations' products with them (INT8ROW) to the sums begun
// from the lanes' starts (INT8START).
#define INT8ARGS \
	MOVQ k+0(FP), R8 \
	MOVQ w+32(FP), DI \
	MOVQ wscales+40(FP), BX \
	VMOVDQU32 int8Groups<>(SB), Y24

#define INT8PAIR \
	MOVQ a+8(FP), SI \
	MOVQ start+16(FP), DX \
	MOVQ scales+24(FP), R10 \
	MOVQ R8, CX \
	SHRQ $7, CX \
	MOVQ R8, R11 \
	SHRQ $3, R11 \
	MOVQ R8, R12 \
	SHRQ $2, R12

#define INT8PREFETCH \
	PREFETCHT0 (AX) \
	PREFETCHT0 64(AX) \
	PREFETCHT0 (AX)(R8*1) \
	PREFETCHT0 64(AX)(R8*1)

#define INT8WSCALES \
	VBROADCASTF128 (BX), Y11 \
	VPERMPS Y11, Y24, Y11 \
	VBROADCASTF128 (BX)(R11*1), Y12 \
	VPERMPS Y12, Y24, Y12

#define INT8ADVANCE(label) \
	ADDQ $128, SI \
	ADDQ $128, AX \
	ADDQ $128, DI \
	ADDQ $32, DX \
	ADDQ $32, R10 \
	ADDQ $16, BX \
	DECQ CX \
	JNZ  label

#define INT8SUMS \
	MOVQ c+48(FP), DX \
	MOVQ ldc+56(FP), R8 \
	SHLQ $2, R8 \
	INT8SUM(Y0, X0, (DX)) \
	INT8SUM(Y1, X1, 4(DX))

#define INT8ROWSUMS(a, xa, b, xb) \
	ADDQ R8, DX \
	INT8SUM(a, xa, (DX)) \
	INT8SUM(b, xb, 4(DX))

#define INT8START(lanes, s0, s1) \
	VMOVDQU32 lanes, s0 \
	VMOVDQA32 s0, s1

#define INT8ROW(acts, s0, s1) \
	VMOVDQU acts, Y10 \
	VPDPBUSD Y10, Y8, s0 \
	VPDPBUSD Y10, Y9, s1

#define INT8WEIGHTS(off) \
	VMOVDQU off(DI), Y8 \
	VMOVDQU off(DI)(R8*1), Y9

#define INT8NEXT(pairs, label) \
	MOVQ k+0(FP), R8 \
	ADDQ R8, DI \
	MOVQ R8, R11 \
	SHRQ $3, R11 \
	ADDQ R11, BX \
	ADDQ $8, c+48(FP) \
	DECQ pairs \
	JNZ  label

// func kernelInt8x4x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int)
//
// Rows i < 4 of the eight-bit activations at a (k bytes apart, their
// lanes' starts and scales k/16 apart) times rows j < 2 of the interleaved
// weights at w (k bytes apart, their groups' scales k/32 apart), into
// c[i*ldc+j]; k is a multiple of 128 (dotInt8 is the same in Go).
//
// Y16–Y23 sum a block's integer products, row i against weight row j in
// Y(16+2i+j), each starting from the lane's start; Y0–Y7 add the blocks'
// scaled sums in single precision, Y(2i+j). Y8 and Y9 hold the block's
// weights, Y10 a row's activations, Y11 and Y12 the weight rows' scales
// spread over the lanes, Y13 a row's lane scales.
//
// Each block asks for the same block of the weight rows two pairs on (AX,
// 4k bytes ahead; a product's pairs of rows follow one another): a query
// reads 12 MB of weights, from memory when the server has been idle, and
// the processor's own prefetching stops at each 4 KiB page, where the
// kernel then waited. After 2 ms idle, a query's vector took 1.33–1.41 ms
// rather than 1.44–1.72 on one goroutine (BenchmarkEncoder, "query/
// eight-bit/after 2ms idle", GOMAXPROCS=1, five runs each).
TEXT ·kernelInt8x4x2(SB), NOSPLIT, $0-72
	INT8ARGS

pair4:
	INT8PAIR
	LEAQ (SI)(R8*2), R9
	ADDQ R8, R9           // a's row 3
	LEAQ (DX)(R12*2), R13
	ADDQ R12, R13         // start's row 3
	LEAQ (R10)(R12*2), R14
	ADDQ R12, R14         // scales' row 3
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7

	LEAQ (DI)(R8*4), AX
block:
	INT8PREFETCH
	INT8START((DX), Y16, Y17)
	INT8START((DX)(R12*1), Y18, Y19)
	INT8START((DX)(R12*2), Y20, Y21)
	INT8START((R13), Y22, Y23)

#define INT8STEP(off) \
	INT8WEIGHTS(off) \
	INT8ROW(off(SI), Y16, Y17) \
	INT8ROW(off(SI)(R8*1), Y18, Y19) \
	INT8ROW(off(SI)(R8*2), Y20, Y21) \
	INT8ROW(off(R9), Y22, Y23)

	INT8STEP(0)
	INT8STEP(32)
	INT8STEP(64)
	INT8STEP(96)

	INT8WSCALES

#define INT8SCALE(lanes, s0, s1, f0, f1) \
	VMOVUPS lanes, Y13 \
	VMULPS Y13, Y11, Y14 \
	VCVTDQ2PS s0, Y15 \
	VMULPS Y14, Y15, Y15 \
	VADDPS Y15, f0, f0 \
	VMULPS Y13, Y12, Y14 \
	VCVTDQ2PS s1, Y15 \
	VMULPS Y14, Y15, Y15 \
	VADDPS Y15, f1, f1

	INT8SCALE((R10), Y16, Y17, Y0, Y1)
	INT8SCALE((R10)(R12*1), Y18, Y19, Y2, Y3)
	INT8SCALE((R10)(R12*2), Y20, Y21, Y4, Y5)
	INT8SCALE((R14), Y22, Y23, Y6, Y7)

	ADDQ $128, R9
	ADDQ $32, R13
	ADDQ $32, R14
	INT8ADVANCE(block)

	// Each sum's eight lanes: the halves added, then pairs of the four.
#define INT8SUM(y, x, dst) \
	VEXTRACTF128 $1, y, X15 \
	VADDPS X15, x, x \
	VMOVHLPS x, x, X15 \
	VADDPS X15, x, x \
	VMOVSHDUP x, X15 \
	VADDSS X15, x, x \
	VMOVSS x, dst

	INT8SUMS
	INT8ROWSUMS(Y2, X2, Y3, X3)
	INT8ROWSUMS(Y4, X4, Y5, X5)
	INT8ROWSUMS(Y6, X6, Y7, X7)
	INT8NEXT(pairs+64(FP), pair4)
	VZEROUPPER
	RET

// func kernelInt8x3x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int)
//
// kernelInt8x4x2 for three rows of activations, with its registers less
// row 3's: a last tile of three rows costs three quarters of four. It asks
// for the weights ahead as kernelInt8x4x2 does.
TEXT ·kernelInt8x3x2(SB), NOSPLIT, $0-72
	INT8ARGS

pair3:
	INT8PAIR
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5

	LEAQ (DI)(R8*4), AX
block3:
	INT8PREFETCH
	INT8START((DX), Y16, Y17)
	INT8START((DX)(R12*1), Y18, Y19)
	INT8START((DX)(R12*2), Y20, Y21)

#define INT8STEP3(off) \
	INT8WEIGHTS(off) \
	INT8ROW(off(SI), Y16, Y17) \
	INT8ROW(off(SI)(R8*1), Y18, Y19) \
	INT8ROW(off(SI)(R8*2), Y20, Y21)

	INT8STEP3(0)
	INT8STEP3(32)
	INT8STEP3(64)
	INT8STEP3(96)

	INT8WSCALES
	INT8SCALE((R10), Y16, Y17, Y0, Y1)
	INT8SCALE((R10)(R12*1), Y18, Y19, Y2, Y3)
	INT8SCALE((R10)(R12*2), Y20, Y21, Y4, Y5)

	INT8ADVANCE(block3)

	INT8SUMS
	INT8ROWSUMS(Y2, X2, Y3, X3)
	INT8ROWSUMS(Y4, X4, Y5, X5)
	INT8NEXT(pairs+64(FP), pair3)
	VZEROUPPER
	RET

// func kernelInt8x2x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int)
//
// kernelInt8x4x2 for two rows of activations: two thirds of the time of
// two rows one at a time (kernelInt8x1x2), which read each weight twice.
// It asks for the weights ahead as kernelInt8x4x2 does.
TEXT ·kernelInt8x2x2(SB), NOSPLIT, $0-72
	INT8ARGS

pair2:
	INT8PAIR
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

	LEAQ (DI)(R8*4), AX
block2:
	INT8PREFETCH
	INT8START((DX), Y16, Y17)
	INT8START((DX)(R12*1), Y18, Y19)

#define INT8STEP2(off) \
	INT8WEIGHTS(off) \
	INT8ROW(off(SI), Y16, Y17) \
	INT8ROW(off(SI)(R8*1), Y18, Y19)

	INT8STEP2(0)
	INT8STEP2(32)
	INT8STEP2(64)
	INT8STEP2(96)

	INT8WSCALES
	INT8SCALE((R10), Y16, Y17, Y0, Y1)
	INT8SCALE((R10)(R12*1), Y18, Y19, Y2, Y3)

	INT8ADVANCE(block2)

	INT8SUMS
	INT8ROWSUMS(Y2, X2, Y3, X3)
	INT8NEXT(pairs+64(FP), pair2)
	VZEROUPPER
	RET

DATA int8Abs<>+0(SB)/4, $0x7fffffff
GLOBL int8Abs<>(SB), RODATA|NOPTR, $4
DATA int8Max<>+0(SB)/4, $127.0
GLOBL int8Max<>(SB), RODATA|NOPTR, $4

// func quantLanesAVX512(q *byte, start *int32, scales *float32, a *float32, lanes int)
//
// quantRow for lanes lanes of 16 values, a multiple of 8: each lane's
// largest magnitude over 127 is its scale, its values times 127 over
// that magnitude are rounded to the nearest integer (ties to even) and
// written four bytes at a time 32 apart, as the kernel reads them, and
// -128 times their sum is its start.
TEXT ·quantLanesAVX512(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), DI
	MOVQ start+8(FP), DX
	MOVQ scales+16(FP), R10
	MOVQ a+24(FP), SI
	MOVQ lanes+32(FP), CX
	VPBROADCASTD int8Abs<>(SB), Z31
	VMOVSS int8Max<>(SB), X30
	XORQ R8, R8 // lane

lane:
	VMOVUPS (SI), Z0
	VPANDD Z31, Z0, Z1
	VEXTRACTF64X4 $1, Z1, Y2
	VMAXPS Y2, Y1, Y1
	VEXTRACTF128 $1, Y1, X2
	VMAXPS X2, X1, X1
	VMOVHLPS X1, X1, X2
	VMAXPS X2, X1, X1
	VMOVSHDUP X1, X2
	VMAXSS X2, X1, X1   // the largest magnitude
	VDIVSS X30, X1, X3  // its scale
	VMOVSS X3, (R10)(R8*4)
	VXORPS X4, X4, X4
	VUCOMISS X4, X1
	JEQ zero
	VDIVSS X1, X30, X4  // 127 over it
zero:
	VBROADCASTSS X4, Z4
	VMULPS Z4, Z0, Z0
	VCVTPS2DQ Z0, Z0
	VPMOVSDB Z0, X5
	// The bytes 32 apart from the lane's place.
	MOVQ R8, AX
	ANDQ $7, AX
	MOVQ R8, BX
	SHRQ $3, BX
	SHLQ $7, BX
	LEAQ (DI)(BX*1), BX
	VMOVD X5, (BX)(AX*4)
	VPEXTRD $1, X5, 32(BX)(AX*4)
	VPEXTRD $2, X5, 64(BX)(AX*4)
	VPEXTRD $3, X5, 96(BX)(AX*4)
	// The sum of the sixteen integers.
	VEXTRACTI64X4 $1, Z0, Y1
	VPADDD Y1, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4e, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xb1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, AX
	IMULL $-128, AX
	MOVL AX, (DX)(R8*4)

	ADDQ $64, SI
	INCQ R8
	CMPQ R8, CX
	JLT  lane
	VZEROUPPER
	RET

// func kernelInt8x1x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, pairs int)
//
// kernelInt8x4x2 for one row of activations: c[0] and c[1]. With one
// row the products of a block would wait on each other in one register
// per weight row; they go to four, Y16–Y19 for weight row 0 and Y20–Y23
// for row 1, added when the block ends (integers: the sum is the same).
// A row alone follows tiles of more rows of the same weights (a text has
// two tokens at least), which asked for them, and it asks for none.
TEXT ·kernelInt8x1x2(SB), NOSPLIT, $0-64
	INT8ARGS

pair1:
	INT8PAIR
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

block1:
	VMOVDQU32 (DX), Y16
	VMOVDQA32 Y16, Y20
	VPXORD Y17, Y17, Y17
	VPXORD Y18, Y18, Y18
	VPXORD Y19, Y19, Y19
	VPXORD Y21, Y21, Y21
	VPXORD Y22, Y22, Y22
	VPXORD Y23, Y23, Y23

#define INT8STEP1(off, s0, s1) \
	VMOVDQU off(DI), Y8 \
	VMOVDQU off(DI)(R8*1), Y9 \
	VPDPBUSD off(SI), Y8, s0 \
	VPDPBUSD off(SI), Y9, s1

	INT8STEP1(0, Y16, Y20)
	INT8STEP1(32, Y17, Y21)
	INT8STEP1(64, Y18, Y22)
	INT8STEP1(96, Y19, Y23)
	VPADDD Y17, Y16, Y16
	VPADDD Y19, Y18, Y18
	VPADDD Y18, Y16, Y16
	VPADDD Y21, Y20, Y20
	VPADDD Y23, Y22, Y22
	VPADDD Y22, Y20, Y17

	INT8WSCALES
	INT8SCALE((R10), Y16, Y17, Y0, Y1)

	ADDQ $128, SI
	ADDQ $128, DI
	ADDQ $32, DX
	ADDQ $32, R10
	ADDQ $16, BX
	DECQ CX
	JNZ  block1

	MOVQ c+48(FP), DX
	INT8SUM(Y0, X0, (DX))
	INT8SUM(Y1, X1, 4(DX))
	INT8NEXT(pairs+56(FP), pair1)
	VZEROUPPER
	RET

// func normalizeAVX2(x *float32, n int, mean, inv float32, gamma, beta *float32)
//
// x[i] = ((x[i] - mean)·inv)·gamma[i] + beta[i] for n values, n a
// multiple of 8, with no fused operation: each rounds as Go's float32
// arithmetic does.
TEXT ·normalizeAVX2(SB), NOSPLIT, $0-40
	MOVQ x+0(FP), DI
	MOVQ n+8(FP), CX
	VBROADCASTSS mean+16(FP), Y1
	VBROADCASTSS inv+20(FP), Y2
	MOVQ gamma+24(FP), SI
	MOVQ beta+32(FP), DX
	SHLQ $2, CX
	XORQ AX, AX

norm8:
	VMOVUPS (DI)(AX*1), Y0
	VSUBPS  Y1, Y0, Y0
	VMULPS  Y2, Y0, Y0
	VMULPS  (SI)(AX*1), Y0, Y0
	VADDPS  (DX)(AX*1), Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     norm8
	VZEROUPPER
	RET

// func addAVX2(x *float32, y *float32, n int)
//
// x[i] += y[i] for n values, n a multiple of 8.
TEXT ·addAVX2(SB), NOSPLIT, $0-24
	MOVQ x+0(FP), DI
	MOVQ y+8(FP), SI
	MOVQ n+16(FP), CX
	SHLQ $2, CX
	XORQ AX, AX

add8:
	VMOVUPS (DI)(AX*1), Y0
	VADDPS  (SI)(AX*1), Y0, Y0
	VMOVUPS Y0, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     add8
	VZEROUPPER
	RET
