package embedding

import (
	"encoding/binary"
	"math"
	"sync"
)

// Processors with eight-bit dot products (AVX-512 VNNI) multiply a query's
// tokens by the eight-bit weights in eight bits too: each token's values
// are rounded to integers, a scale to every 16 (actGroup), and products of
// integers summed exactly in 32 bits stand for the single-precision
// products of the widened weights. A query's products take half the time
// or less (BenchmarkInt8Matmul, nine tokens: 59 µs against 120 for the
// intermediate projection, 51 against 128 for the output one), and its
// vector keeps a cosine of at least 0.9996 with Load's over SciFact's 809
// training queries, whose ranking by meaning keeps its nDCG@10 (0.6600,
// against 0.6599 for the weights in eight bits alone and 0.6602 for Load);
// texts of punctuation alone, or none, keep 0.998.
//
// The products run in blocks of 128 values (dotBlock): a 256-bit register
// holds eight lanes of four bytes, and lane l of the block's four
// registers holds the 16 values [16l, 16l+16), so that each lane sums one
// weight group's half and one activation group, scaled once per block.
// The weights are kept in that order (interleave), in offset binary (each
// plus 128: the instruction multiplies unsigned bytes by signed ones);
// each lane's sum starts at minus 128 times its activations' sum, which
// takes the offset away again.

// actGroup is how many consecutive values of a token share one scale in
// eight bits: a lane of dotBlock.
const actGroup = 16

// dotBlock is how many values one step of the eight-bit kernel takes.
const dotBlock = 128

// interleavable reports whether a matrix of cols columns has the
// interleaved form the eight-bit kernel reads.
func interleavable(cols int) bool { return cols > 0 && cols%dotBlock == 0 }

// interleave writes the quantGroup-scaled int8 weights src, rows of a
// multiple of dotBlock, into dst in the kernel's order and offset binary.
func interleave(dst, src []byte) {
	for b := 0; b < len(src); b += dotBlock {
		for t := range 4 {
			for l := range 8 {
				for x := range 4 {
					dst[b+t*32+l*4+x] = src[b+l*16+t*4+x] ^ 0x80
				}
			}
		}
	}
}

// acts8 are m rows of activations in eight bits, in the kernel's order,
// with each lane's scale and the sum its dot product starts from.
type acts8 struct {
	q      []byte    // rows × cols int8 values, interleaved
	start  []int32   // rows × cols/actGroup: -128 × the lane's values' sum
	scales []float32 // rows × cols/actGroup
}

var actsPool sync.Pool

// quantActs returns the eight-bit form of the m rows of a, k values each;
// release gives it back.
func quantActs(m, k int, a []float32) *acts8 {
	q, _ := actsPool.Get().(*acts8)
	if q == nil {
		q = new(acts8)
	}
	lanes := m * k / actGroup
	if cap(q.q) < m*k {
		q.q = make([]byte, m*k)
	}
	if cap(q.start) < lanes {
		q.start, q.scales = make([]int32, lanes), make([]float32, lanes)
	}
	q.q, q.start, q.scales = q.q[:m*k], q.start[:lanes], q.scales[:lanes]
	for i := range m {
		quantRow(q.q[i*k:(i+1)*k], q.start[i*k/actGroup:(i+1)*k/actGroup], q.scales[i*k/actGroup:(i+1)*k/actGroup], a[i*k:(i+1)*k])
	}
	return q
}

func (q *acts8) release() { actsPool.Put(q) }

// quantRow writes one row of activations a into q in the kernel's order,
// each lane's 16 values as the integers nearest them over the lane's
// scale, the largest magnitude over 127.
func quantRow(q []byte, start []int32, scales []float32, a []float32) {
	if useInt8 && len(a)%dotBlock == 0 && len(a) > 0 {
		quantLanesAVX512(&q[0], &start[0], &scales[0], &a[0], len(a)/actGroup)
		return
	}
	quantRowGo(q, start, scales, a)
}

// quantRowGo is quantRow in Go.
func quantRowGo(q []byte, start []int32, scales []float32, a []float32) {
	for lane := range len(a) / actGroup {
		vals := a[lane*actGroup : (lane+1)*actGroup]
		// The largest magnitude, compared as bits: for finite values,
		// the order of their magnitudes.
		var bits uint32
		for _, v := range vals {
			bits = max(bits, math.Float32bits(v)&^(1<<31))
		}
		largest := math.Float32frombits(bits)
		scales[lane] = largest / 127
		var inv float32
		if largest != 0 {
			inv = 127 / largest
		}
		// The lane's values go to bytes 4x..4x+3 of lane l of the
		// block's four registers, l = lane%8.
		out := q[lane/8*dotBlock+lane%8*4:]
		var sum int32
		for x := 0; x < actGroup; x += 4 {
			n0 := int32(max(-127, min(127, math.RoundToEven(float64(vals[x]*inv)))))
			n1 := int32(max(-127, min(127, math.RoundToEven(float64(vals[x+1]*inv)))))
			n2 := int32(max(-127, min(127, math.RoundToEven(float64(vals[x+2]*inv)))))
			n3 := int32(max(-127, min(127, math.RoundToEven(float64(vals[x+3]*inv)))))
			sum += n0 + n1 + n2 + n3
			binary.LittleEndian.PutUint32(out[x*8:], uint32(byte(n0))|uint32(byte(n1))<<8|uint32(byte(n2))<<16|uint32(byte(n3))<<24)
		}
		start[lane] = -128 * sum
	}
}

// mulTInt8 is mulTQuant on eight-bit activations: c = a·wᵀ for the m
// rows of a, through the interleaved weights.
func (w *matrix) mulTInt8(m int, a []float32, c []float32, ldc int, workers int) {
	acts := quantActs(m, w.cols, a)
	defer acts.release()
	w.mulActs(m, acts, c, ldc, workers)
}

// mulActs sets the m rows of c to acts·wᵀ, four rows of acts at a time
// against two rows of weights, and the one to three rows after the last
// four in a tile of their own; a last odd row of weights is multiplied in
// Go. A tile's time is mostly in its rows' products, but a quarter of
// four rows' is in reading the weights and the call, which fewer rows
// still pay: a 1536×384 product (BenchmarkInt8Matmul) takes 23 µs in
// tiles of four rows, 19 of three, 15 of two and 12 of one, so that three
// rows cost less alone than in a tile of four with a row of zeros, and
// two less together than one at a time (22 µs). A kernel's call runs
// over the pairs of rows of weights in chunkBytes rather than one pair:
// four rows took 22.1–22.2 µs rather than 24.1–24.5, seven 39.8–40.1
// rather than 43.0–43.1, sixteen 87.7–87.9 rather than 95.3–95.7.
func (w *matrix) mulActs(m int, acts *acts8, c []float32, ldc int, workers int) {
	k, n := w.cols, w.rows
	lanes := k / actGroup
	chunk := max(1, chunkBytes/(2*k)) // pairs of rows
	columns(m, n, k, workers, func(j0, j1 int) {
		j := j0
		for j+2 <= j1 {
			pairs := min(chunk, (j1-j)/2)
			end := j + 2*pairs // the columns [j, end) of each row
			_, _, _ = w.u8[end*k-1], w.scales[end*k/quantGroup*4-1], c[(m-1)*ldc+end-1]
			ws, wscales := &w.u8[j*k], &w.scales[j*k/quantGroup*4]
			i := 0
			for ; i+4 <= m; i += 4 {
				kernelInt8x4x2(k, &acts.q[i*k], &acts.start[i*lanes], &acts.scales[i*lanes], ws, wscales, &c[i*ldc+j], ldc, pairs)
			}
			switch m - i {
			case 3:
				kernelInt8x3x2(k, &acts.q[i*k], &acts.start[i*lanes], &acts.scales[i*lanes], ws, wscales, &c[i*ldc+j], ldc, pairs)
			case 2:
				kernelInt8x2x2(k, &acts.q[i*k], &acts.start[i*lanes], &acts.scales[i*lanes], ws, wscales, &c[i*ldc+j], ldc, pairs)
			case 1:
				kernelInt8x1x2(k, &acts.q[i*k], &acts.start[i*lanes], &acts.scales[i*lanes], ws, wscales, &c[i*ldc+j], pairs)
			}
			j = end
		}
		if j < j1 {
			for i := range m {
				c[i*ldc+j] = dotInt8(acts, i, w, j)
			}
		}
	})
}

// chunkBytes is how many bytes of weights a kernel's call runs over, in
// pairs of rows, which stay in the second-level cache for the tiles of
// rows after the first: 64 KiB ran sixteen rows of a 384×1536 product in
// 83–84 µs, 16 KiB in 87–88 and 4 KiB in 98.
const chunkBytes = 64 << 10

// dotInt8 is row i of acts times row j of w's interleaved weights, summed
// as the kernel sums it: each lane's integer sum, from its start, times
// the lane's activation scale times its weight group's scale, added into
// eight lanes over the blocks and the lanes then added in pairs.
func dotInt8(acts *acts8, i int, w *matrix, j int) float32 {
	k := w.cols
	lanes := k / actGroup
	q := acts.q[i*k : (i+1)*k]
	ws := w.u8[j*k : (j+1)*k]
	start, scales := acts.start[i*lanes:(i+1)*lanes], acts.scales[i*lanes:(i+1)*lanes]
	var acc [8]float32
	for b := 0; b < k; b += dotBlock {
		var sums [8]int32
		for l := range 8 {
			sums[l] = start[b/actGroup+l]
		}
		for x := b; x < b+dotBlock; x++ {
			sums[(x-b)%32/4] += int32(ws[x]) * int32(int8(q[x]))
		}
		for l := range 8 {
			g := (b + l*actGroup) / quantGroup
			sw := math.Float32frombits(binary.LittleEndian.Uint32(w.scales[(j*k/quantGroup+g)*4:]))
			cs := sw * scales[b/actGroup+l]
			acc[l] += float32(float32(sums[l]) * cs)
		}
	}
	return ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]))
}
