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
