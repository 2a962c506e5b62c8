package query

import (
	"cmp"
	"slices"
	"testing"

	"github.com/bits-and-blooms/bitset"
)

// A row map answers, for every row, its document and chunk, and for
// every chunk number, its row, with documents of no chunks between and
// after others and documents whose chunks lie out of row order.
func TestRowMap(t *testing.T) {
	// Documents in row order: chunks and the first chunk's number.
	docs := []struct{ chunks, start uint32 }{{3, 10}, {0, 0}, {2, 0}, {0, 7}, {4, 20}, {1, 13}, {0, 0}}
	m := &rowMap{}
	rows := uint32(0)
	for d, doc := range docs {
		m.first = append(m.first, rows)
		m.start = append(m.start, doc.start)
		rows += doc.chunks
		if doc.chunks > 0 {
			m.byStart = append(m.byStart, uint32(d))
		}
	}
	m.first = append(m.first, rows)
	slices.SortFunc(m.byStart, func(a, b uint32) int { return cmp.Compare(m.start[a], m.start[b]) })

	rowOf := map[uint64]int{}
	row := 0
	for d, doc := range docs {
		for i := range doc.chunks {
			if got := m.docOfRow(row); got != uint32(d) {
				t.Errorf("row %d: document %d, want %d", row, got, d)
			}
			rowOf[uint64(doc.start+i)] = row
			row++
		}
	}
	for g := range uint64(30) {
		want, has := rowOf[g]
		got, ok := m.rowOf(g)
		if ok != has || ok && got != want {
			t.Errorf("chunk %d: row %d, %v; want %d, %v", g, got, ok, want, has)
		}
		doc := m.docOf(g)
		if !has && doc != noDocument || has && doc != m.docOfRow(want) {
			t.Errorf("chunk %d: document %d", g, doc)
		}
	}
}

// count marks the rows of chunks not in force and counts the others'
// distances over any range of rows, whole documents or not.
func TestRowMapCount(t *testing.T) {
	m := &rowMap{first: []uint32{0, 3, 3, 5, 9}, start: []uint32{10, 0, 0, 20}}
	g := []uint{10, 11, 12, 0, 1, 20, 21, 22, 23} // by row
	inForce := bitset.New(30)
	for _, c := range []uint{11, 0, 1, 22} {
		inForce.Set(c)
	}
	for lo := 0; lo <= 9; lo++ {
		for hi := lo; hi <= 9; hi++ {
			dist := make([]uint16, 9)
			for i := range dist {
				dist[i] = uint16(i)
			}
			hist := make([]int32, 10)
			n := m.count(inForce, lo, hi, dist, hist)
			want := 0
			for row := range 9 {
				in := row >= lo && row < hi
				switch {
				case in && inForce.Test(g[row]):
					want++
					if dist[row] != uint16(row) || hist[row] != 1 {
						t.Fatalf("[%d, %d): row %d in force: distance %d, counted %d", lo, hi, row, dist[row], hist[row])
					}
				case in:
					if dist[row] != notInForce {
						t.Fatalf("[%d, %d): row %d not in force, distance %d", lo, hi, row, dist[row])
					}
				default:
					if dist[row] != uint16(row) || hist[row] != 0 {
						t.Fatalf("[%d, %d): row %d outside touched", lo, hi, row)
					}
				}
			}
			if n != want {
				t.Fatalf("[%d, %d): %d in force, want %d", lo, hi, n, want)
			}
		}
	}
}
