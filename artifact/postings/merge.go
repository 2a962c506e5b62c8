package postings

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Merge writes to out the postings of the segments of rs merged into one.
// newDocs[i][d] numbers chunk d of rs[i] in the merged segment, or is
// dropped for a chunk left out (ice.Merge's numbering); the numbers of the
// chunks kept must rise from segment to segment.
func Merge(out io.Writer, rs []*Reader, newDocs [][]uint64, dropped uint64) (int64, error) {
	var docs uint64
	for i, r := range rs {
		if len(newDocs[i]) != int(r.docs) {
			return 0, fmt.Errorf("merge postings: segment %d has %d chunks, %d numbered", i, r.docs, len(newDocs[i]))
		}
		for _, nd := range newDocs[i] {
			if nd != dropped {
				docs = max(docs, nd+1)
			}
		}
	}
	if docs > math.MaxUint32 {
		return 0, fmt.Errorf("merge postings: %d chunks is too many for a segment", docs)
	}
	lens := make([]uint32, docs*Fields)
	factors := make([]float64, docs)
	var (
		starts []uint64
		table  docList
	)
	ones := true
	next := uint64(0) // the table lists documents in chunk order
	for i, r := range rs {
		for d, nd := range newDocs[i] {
			if nd == dropped {
				continue
			}
			if nd < next {
				return 0, fmt.Errorf("merge postings: chunk numbers do not rise")
			}
			next = nd + 1
			for f := range Fields {
				lens[int(nd)*Fields+f] = r.Length(uint32(d), f)
			}
			factors[nd] = r.Factor(uint32(d))
			first := r.Starts(uint32(d))
			if first {
				depth, path, _, ok := r.Document(uint32(d))
				if !ok {
					return 0, fmt.Errorf("merge postings: %w: segment %d has no document for chunk %d", ErrCorrupt, i, d)
				}
				table.add(depth, path)
			}
			starts = setBit(starts, uint32(nd), first)
			ones = ones && factors[nd] == 1
		}
	}
	// Segments none of whose chunks are dropped, numbered on from one to
	// the next, merge by copying their lists' blocks (shifted): only the
	// first block of each segment's part of a list changes.
	var bases []uint32
	if shifted(newDocs) {
		bases = make([]uint32, len(rs))
		for i := range rs {
			if len(newDocs[i]) > 0 {
				bases[i] = uint32(newDocs[i][0])
			}
		}
	}
	cursors := make([]*dictCursor, len(rs))
	for i, r := range rs {
		cursors[i] = &dictCursor{r: r}
		cursors[i].next()
	}
	fw := newFileWriter(out)
	var (
		list  []posting
		buf   []byte
		term  []byte
		it    Iterator
		enc   encoder
		parts []Postings
		segs  []int // the segment of each part
		err   error
	)
	for {
		term = term[:0]
		found := false
		for _, c := range cursors {
			if c.err != nil {
				return 0, fmt.Errorf("merge postings: %w", c.err)
			}
			if !c.done && (!found || bytes.Compare(c.term, term) < 0) {
				term, found = append(term[:0], c.term...), true
			}
		}
		if !found {
			break
		}
		// The term's lists, in segment order.
		parts, segs = parts[:0], segs[:0]
		for i, c := range cursors {
			if c.done || !bytes.Equal(c.term, term) {
				continue
			}
			p, err := rs[i].postingsAt(c.off)
			if err != nil {
				return 0, fmt.Errorf("merge postings: %w", err)
			}
			parts, segs = append(parts, p), append(segs, i)
			c.next()
		}
		if bases != nil {
			if buf, err = enc.appendJoined(buf[:0], parts, segs, bases, rs); err != nil {
				return 0, fmt.Errorf("merge postings: %w", err)
			}
			fw.addTerm(string(term), buf)
			continue
		}
		list = list[:0]
		for k, p := range parts {
			i := segs[k]
			it.Reset(p, rs[i].docs)
			for d := it.Next(); d != NoMore; d = it.Next() {
				nd := newDocs[i][d]
				if nd == dropped {
					continue
				}
				if n := len(list); n > 0 && uint64(list[n-1].doc) >= nd {
					return 0, fmt.Errorf("merge postings: chunk numbers do not rise")
				}
				list = append(list, posting{doc: uint32(nd), freq: *it.Freqs()})
			}
			if err := it.Err(); err != nil {
				return 0, fmt.Errorf("merge postings: %w", err)
			}
		}
		if len(list) > 0 {
			buf = enc.encodeList(buf[:0], list, lens)
			fw.addTerm(string(term), buf)
		}
	}
	if ones {
		factors = nil
	}
	return fw.finish(uint32(docs), lens, starts, factors, &table)
}

// shifted reports whether newDocs keeps every chunk, each segment's
// numbered on from the last of the one before.
func shifted(newDocs [][]uint64) bool {
	next := uint64(0)
	for _, nd := range newDocs {
		for _, d := range nd {
			if d != next {
				return false
			}
			next++
		}
	}
	return true
}

// appendJoined appends to buf the list of the postings parts, the chunks
// of parts[k], of segment rs[segs[k]], numbered from bases[segs[k]] on: each part's blocks as they are,
// but for the first, whose skip entry and first chunk count from the last
// chunk of the part before rather than from none. The list's bound joins
// the parts' bounds, as encodeList joins its blocks'.
func (e *encoder) appendJoined(buf []byte, parts []Postings, segs []int, bases []uint32, rs []*Reader) ([]byte, error) {
	skip, data := e.skip[:0], e.data[:0]
	listPairs := &e.listPairs
	for f := range Fields {
		listPairs[f] = listPairs[f][:0]
	}
	df := 0
	prevLast := int64(-1) // in the merged numbering
	var bound Block
	for k, p := range parts {
		df += p.DF
		for f := range Fields {
			listPairs[f] = pareto(append(listPairs[f], p.Max.Pairs[f][:p.Max.N[f]]...))
		}
		entries, blocks := p.data[:p.skip], p.data[p.skip:]
		base := int64(bases[segs[k]])
		local := int64(-1) // the part's last chunk so far, in its numbering
		pos, dpos := 0, 0
		for first := true; pos < len(entries); first = false {
			entry := pos
			delta, n1 := uvarintAt(entries, pos)
			length, n2 := uvarintAt(entries, pos+max(n1, 0))
			if n1 <= 0 || n2 <= 0 {
				return nil, fmt.Errorf("%w: skip entry", ErrCorrupt)
			}
			pos += n1 + n2
			boundAt := pos
			var ok bool
			if pos, ok = readBound(entries, pos, &bound); !ok || length > uint64(len(blocks)-dpos) || length == 0 {
				return nil, fmt.Errorf("%w: skip entry", ErrCorrupt)
			}
			block := blocks[dpos : dpos+int(length)]
			dpos += int(length)
			last := local + 1 + int64(min(delta, math.MaxUint32))
			if last >= int64(rs[segs[k]].docs) {
				return nil, fmt.Errorf("%w: skip entry out of range", ErrCorrupt)
			}
			if !first {
				// Counted from the block before, in the part: as it was.
				skip = append(skip, entries[entry:pos]...)
				data = append(data, block...)
				local = last
				continue
			}
			v, n := binary.Uvarint(block)
			if n <= 0 {
				return nil, fmt.Errorf("%w: block data", ErrCorrupt)
			}
			doc := base + int64(v>>Fields) // the first chunk, counted from none
			v = uint64(doc-(prevLast+1))<<Fields | v&(1<<Fields-1)
			n0 := len(data)
			data = binary.AppendUvarint(data, v)
			data = append(data, block[n:]...)
			skip = binary.AppendUvarint(skip, uint64(base+last-(prevLast+1)))
			skip = binary.AppendUvarint(skip, uint64(len(data)-n0))
			skip = append(skip, entries[boundAt:pos]...)
			local = last
		}
		prevLast = base + local
	}
	e.skip, e.data = skip, data
	buf = binary.AppendUvarint(buf, uint64(df))
	buf = binary.AppendUvarint(buf, uint64(len(skip)))
	buf = appendBound(buf, listPairs)
	buf = append(buf, skip...)
	return append(buf, data...), nil
}

// dictCursor walks a dictionary in term order.
type dictCursor struct {
	r       *Reader
	block   int
	inBlock int // terms read from the block
	pos     int
	term    []byte
	off     uint64
	done    bool
	err     error
}

// next moves to the next term; done is set past the last.
func (c *dictCursor) next() {
	if c.done || c.err != nil {
		return
	}
	if c.inBlock == dictBlock {
		c.block, c.inBlock, c.pos = c.block+1, 0, 0
	}
	if c.block*dictBlock+c.inBlock >= int(c.r.terms) {
		c.done = true
		return
	}
	if c.inBlock == 0 {
		c.term = c.term[:0]
	}
	d := c.r.blockStart(c.block)
	shared, n1 := uvarintAt(d, c.pos)
	suffix, n2 := uvarintAt(d, c.pos+max(n1, 0))
	if n1 <= 0 || n2 <= 0 || shared > uint64(len(c.term)) || uint64(len(d)-c.pos-n1-n2) < suffix {
		c.err = fmt.Errorf("%w: dictionary block %d", ErrCorrupt, c.block)
		return
	}
	c.pos += n1 + n2
	c.term = append(c.term[:shared], d[c.pos:c.pos+int(suffix)]...)
	c.pos += int(suffix)
	off, n3 := uvarintAt(d, c.pos)
	if n3 <= 0 {
		c.err = fmt.Errorf("%w: dictionary block %d", ErrCorrupt, c.block)
		return
	}
	c.pos += n3
	c.off = off
	c.inBlock++
}
