package artifact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestVectorsRoundTrip(t *testing.T) {
	const dims, count = 70, 5 // bits over more than one word, and a part word
	rng := rand.New(rand.NewPCG(1, 2))
	vecs := make([][]float32, count)
	for i := range vecs {
		vecs[i] = make([]float32, dims)
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
	}
	var buf bytes.Buffer
	vw, err := NewVectorWriter(&buf, dims, count)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vecs {
		if i == 2 {
			err = vw.AddQuantized(Quantize(nil, v), nil, uint64(100+i)) // as copied from another file
		} else {
			err = vw.Add(v, uint64(100+i))
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	places := []Placement{{Seg: 7, Doc: 0, Chunks: 2}, {Seg: 7, Doc: 2, Chunks: 1}, {Seg: 9, Doc: 0, Chunks: 2}}
	if err := vw.Close(places); err != nil {
		t.Fatal(err)
	}
	v, err := ParseVectors(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if v.Dims != dims || v.Count != count || !v.HasBits() || !v.HasTextHashes() || !v.HasPlacements() {
		t.Fatalf("read %d×%d, bits %v", v.Count, v.Dims, v.HasBits())
	}
	var got []Placement
	for p := range v.Placements() {
		got = append(got, p)
	}
	if len(got) != len(places) || got[2] != places[2] {
		t.Errorf("placements %v, want %v", got, places)
	}
	for i, want := range vecs {
		got := Dequantize(nil, v.Row(i))
		var norm, dot float64
		for j := range want {
			norm += float64(want[j]) * float64(want[j])
			dot += float64(want[j]) * float64(got[j])
			if math.Abs(float64(got[j]-want[j])) > 0.03 {
				t.Errorf("vector %d value %d: %v stored as %v", i, j, want[j], got[j])
			}
		}
		if d := v.Dot(want, i); math.Abs(float64(d)-dot) > 1e-3*norm {
			t.Errorf("Dot %v, want %v", d, dot)
		}
		if v.TextHash(i) != uint64(100+i) {
			t.Errorf("vector %d: text hash %d, want %d", i, v.TextHash(i), 100+i)
		}
		bits := v.Bits(i)
		for j := range want {
			set := binary.LittleEndian.Uint64(bits[8*(j/64):])&(1<<(j%64)) != 0
			if set != (got[j] > 0) {
				t.Fatalf("vector %d bit %d is %v for %v", i, j, set, got[j])
			}
		}
	}

	// A file of the first layout, without bits, still reads.
	rows := bytes.Clone(buf.Bytes()[:16+count*(4+dims)])
	old := append([]byte(vectorsMagicV1), rows[8:]...)
	if v1, err := ParseVectors(old); err != nil || v1.HasBits() || v1.HasTextHashes() || v1.TextHash(1) != 0 || v1.Dot(vecs[0], 0) != v.Dot(vecs[0], 0) {
		t.Errorf("a KBQVEC01 file: %v, bits %v", err, v1 != nil && v1.HasBits())
	}
	// Lengths that do not match the header are corrupt.
	for _, bad := range [][]byte{buf.Bytes()[:buf.Len()-1], append(bytes.Clone(buf.Bytes()), 0), rows, buf.Bytes()[:10]} {
		if _, err := ParseVectors(bad); !errors.Is(err, ErrVectors) {
			t.Errorf("%d bytes: %v, want ErrVectors", len(bad), err)
		}
	}
}

// TestVectorsV2: a file of the second layout, without placements, reads
// with its bits and hashes.
func TestVectorsV2(t *testing.T) {
	var buf bytes.Buffer
	vw, err := NewVectorWriter(&buf, 8, 2)
	if err != nil {
		t.Fatal(err)
	}
	vw.Add([]float32{1, -1, 1, -1, 1, -1, 1, -1}, 5)
	vw.Add([]float32{-1, 1, -1, 1, -1, 1, -1, 1}, 6)
	if err := vw.Close(nil); err != nil {
		t.Fatal(err)
	}
	data := bytes.Clone(buf.Bytes()[:buf.Len()-4]) // no placement count
	copy(data, vectorsMagicV2)
	v, err := ParseVectors(data)
	if err != nil {
		t.Fatal(err)
	}
	if !v.HasBits() || v.HasPlacements() || v.TextHash(1) != 6 || v.Bits(0)[0] != 0b01010101 {
		t.Errorf("bits %v %08b, placements %v, hash %d", v.HasBits(), v.Bits(0)[0], v.HasPlacements(), v.TextHash(1))
	}
}

// TestDotKernel: the vector kernel gives the inner product Go gives, for
// every length it takes.
func TestDotKernel(t *testing.T) {
	if !useAVX2 {
		t.Skip("no AVX2 and FMA: Dot runs in Go")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{8, 16, 24, 40, 384, 768} {
		q, v := make([]float32, n), make([]byte, n)
		for i := range q {
			q[i] = float32(rng.NormFloat64())
			v[i] = byte(int8(rng.IntN(255) - 127))
		}
		v[0], v[n-1] = 0x80, 0x7f // -128 and 127
		got, want := dotInt8(&q[0], &v[0], n), dotGo(q, v)
		if math.Abs(float64(got-want)) > 1e-4*math.Max(1, math.Abs(float64(want))) {
			t.Errorf("n=%d: kernel %v, Go %v", n, got, want)
		}
	}
}

// randomVectors writes count random vectors of dims values and parses
// them back.
func randomVectors(t *testing.T, dims, count int) (*Vectors, [][]float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(5, 6))
	var buf bytes.Buffer
	vw, err := NewVectorWriter(&buf, dims, count)
	if err != nil {
		t.Fatal(err)
	}
	vecs := make([][]float32, count)
	for i := range vecs {
		vecs[i] = make([]float32, dims)
		for j := range vecs[i] {
			vecs[i][j] = float32(rng.NormFloat64())
		}
		if err := vw.Add(vecs[i], uint64(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := vw.Close(nil); err != nil {
		t.Fatal(err)
	}
	v, err := ParseVectors(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	return v, vecs
}

// TestHamming: the distances of the bits, from the kernel at 384
// dimensions and from Go at others, are the bits that differ, counted one
// by one.
func TestHamming(t *testing.T) {
	for _, dims := range []int{384, 70} {
		v, vecs := randomVectors(t, dims, 37)
		words := func(i int) []uint64 { // the bits stored for row i
			var w []uint64
			for b := v.Bits(i); len(b) > 0; b = b[8:] {
				w = append(w, binary.LittleEndian.Uint64(b))
			}
			return w
		}
		q := AppendBits(nil, vecs[3])
		q[0] ^= 0b1011 // not quite a stored row's
		for _, span := range [][2]int{{0, 37}, {5, 6}, {11, 30}} {
			dist := make([]uint16, span[1]-span[0])
			v.Hamming(q, span[0], dist)
			for i, got := range dist {
				row := words(span[0] + i)
				want := 0
				for w := range q {
					for b := range 64 {
						want += int(q[w]>>b&1 ^ row[w]>>b&1)
					}
				}
				if int(got) != want {
					t.Errorf("dims %d, row %d: distance %d, want %d", dims, span[0]+i, got, want)
				}
			}
		}
		if dist := make([]uint16, 1); dims == 384 {
			v.Hamming(words(3), 3, dist)
			if dist[0] != 0 {
				t.Errorf("a vector's distance to its own bits: %d", dist[0])
			}
		}
	}
}

// TestDotRows: ranking rows in a batch, asked of memory ahead, gives each
// row's Dot, in the order the rows are given.
func TestDotRows(t *testing.T) {
	v, vecs := randomVectors(t, 384, 40)
	rows := []int32{39, 0, 7, 7, 12, 3, 25, 30, 31, 1, 2, 38, 17, 5}
	out := make([]float32, len(rows))
	v.DotRows(vecs[0], rows, out)
	for i, r := range rows {
		if want := v.Dot(vecs[0], int(r)); out[i] != want {
			t.Errorf("row %d: %v, want Dot's %v", r, out[i], want)
		}
	}
	v.DotRows(vecs[0], nil, nil) // nothing to rank
}
