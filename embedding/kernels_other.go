//go:build !amd64

package embedding

const (
	useAVX2 = false
	useInt8 = false
)

func hasF16C() bool { return false }

func kernel3x4(k int, a *float32, lda int, b *float32, ldb int, c *float32, ldc int) {
	panic("embedding: no vector kernel on this architecture")
}

func halfToFloatF16C(dst *float32, src *byte, n int) {
	panic("embedding: no vector kernel on this architecture")
}

func kernel3x4h(k int, a *float32, lda int, b *byte, ldb int, c *float32, ldc int) {
	panic("embedding: no vector kernel on this architecture")
}

func dequantAVX2(dst *float32, src *byte, scales *byte, n int) {
	panic("embedding: no vector kernel on this architecture")
}

func kernelQ4x2(k int, a *float32, lda int, w *byte, scales *byte, c *float32, ldc int) {
	panic("embedding: no vector kernel on this architecture")
}

func geluAVX2(x *float32, n int) {
	panic("embedding: no vector kernel on this architecture")
}

func kernelInt8x4x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int) {
	panic("embedding: no vector kernel on this architecture")
}

func quantLanesAVX512(q *byte, start *int32, scales *float32, a *float32, lanes int) {
	panic("embedding: no vector kernel on this architecture")
}

func kernelInt8x3x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int) {
	panic("embedding: no vector kernel on this architecture")
}

func kernelInt8x2x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, ldc int, pairs int) {
	panic("embedding: no vector kernel on this architecture")
}

func kernelInt8x1x2(k int, a *byte, start *int32, scales *float32, w *byte, wscales *byte, c *float32, pairs int) {
	panic("embedding: no vector kernel on this architecture")
}

func normalizeAVX2(x *float32, n int, mean, inv float32, gamma, beta *float32) {
	panic("embedding: no vector kernel on this architecture")
}

func addAVX2(x *float32, y *float32, n int) {
	panic("embedding: no vector kernel on this architecture")
}
