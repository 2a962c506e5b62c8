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
