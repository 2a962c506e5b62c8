//go:build !amd64

package artifact

const useAVX2 = false

func dotInt8(q *float32, v *byte, n int) float32 { panic("unreachable") }
