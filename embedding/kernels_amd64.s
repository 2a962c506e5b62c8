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
