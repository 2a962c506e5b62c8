#include "textflag.h"

// func dotInt8(q *float32, v *byte, n int) float32
//
// The inner product of n float32 values at q with n int8 values at v, n a
// multiple of 8: each step widens 16 int8 values to int32, converts them to
// float32 and adds their products with q into two accumulators.
TEXT ·dotInt8(SB), NOSPLIT, $0-28
	MOVQ q+0(FP), AX
	MOVQ v+8(FP), BX
	MOVQ n+16(FP), CX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1

loop16:
	CMPQ CX, $16
	JLT  tail8
	VPMOVSXBD (BX), Y2
	VPMOVSXBD 8(BX), Y3
	VCVTDQ2PS Y2, Y2
	VCVTDQ2PS Y3, Y3
	VFMADD231PS (AX), Y2, Y0
	VFMADD231PS 32(AX), Y3, Y1
	ADDQ $16, BX
	ADDQ $64, AX
	SUBQ $16, CX
	JMP  loop16

tail8:
	CMPQ CX, $8
	JLT  sum
	VPMOVSXBD (BX), Y2
	VCVTDQ2PS Y2, Y2
	VFMADD231PS (AX), Y2, Y0

sum:
	VADDPS       Y1, Y0, Y0
	VEXTRACTF128 $1, Y0, X1
	VADDPS       X1, X0, X0
	VHADDPS      X0, X0, X0
	VHADDPS      X0, X0, X0
	VZEROUPPER
	MOVSS X0, ret+24(FP)
	RET

// func prefetch(p *byte, n int)
//
// Asks for the cache lines of the n bytes at p ahead of their use.
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	ADDQ AX, CX

line:
	PREFETCHT0 (AX)
	ADDQ $64, AX
	CMPQ AX, CX
	JLT  line
	RET

// func hamming384(q *uint64, bits *byte, n int, dist *uint16)
//
// For each of n rows of six little-endian words at bits, the number of
// bits that differ from the six words at q, into dist.
TEXT ·hamming384(SB), NOSPLIT, $0-32
	MOVQ q+0(FP), SI
	MOVQ bits+8(FP), BX
	MOVQ n+16(FP), CX
	MOVQ dist+24(FP), DI
	MOVQ 0(SI), R8
	MOVQ 8(SI), R9
	MOVQ 16(SI), R10
	MOVQ 24(SI), R11
	MOVQ 32(SI), R12
	MOVQ 40(SI), R13
	TESTQ CX, CX
	JLE  done

row:
	MOVQ    0(BX), AX
	XORQ    R8, AX
	POPCNTQ AX, AX
	MOVQ    8(BX), DX
	XORQ    R9, DX
	POPCNTQ DX, DX
	ADDQ    DX, AX
	MOVQ    16(BX), DX
	XORQ    R10, DX
	POPCNTQ DX, DX
	ADDQ    DX, AX
	MOVQ    24(BX), DX
	XORQ    R11, DX
	POPCNTQ DX, DX
	ADDQ    DX, AX
	MOVQ    32(BX), DX
	XORQ    R12, DX
	POPCNTQ DX, DX
	ADDQ    DX, AX
	MOVQ    40(BX), DX
	XORQ    R13, DX
	POPCNTQ DX, DX
	ADDQ    DX, AX
	MOVW    AX, (DI)
	ADDQ    $48, BX
	ADDQ    $2, DI
	DECQ    CX
	JNZ     row

done:
	RET
