//go:build !amd64

package artifact

const useAVX2 = false

const usePOPCNT = false

func dotInt8(q *float32, v *byte, n int) float32 { panic("unreachable") }

func prefetch(p *byte, n int) {}

func hamming384(q *uint64, bits *byte, n int, dist *uint16) { panic("unreachable") }
