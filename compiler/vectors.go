package compiler

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strings"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/internal/mmap"
)

// An Embedder turns chunk texts into unit vectors for semantic search.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Identity says which model embeds, for the manifest: an artifact's
	// vectors are only compared with vectors of the same model.
	Identity() artifact.Embeddings
}

// embedBatch is how many chunks go to the embedder at once: enough to keep
// every core busy, few enough to report progress and to stop soon.
const embedBatch = 64

// embedText is what a chunk's vector is made of: the document's title and
// the chunk's heading trail give the words of a chunk their subject.
func embedText(d *document, c chunk) string {
	var b strings.Builder
	b.WriteString(d.Title)
	if c.heading != "" && c.heading != d.Title {
		b.WriteString("\n")
		b.WriteString(c.heading)
	}
	b.WriteString("\n")
	b.Write(d.src.Data[c.start:c.end])
	return b.String()
}

// keepTexts records the texts of d's chunks for embedding, by blob.
func (b *indexBuild) keepTexts(d *document) {
	if b.opts.Embedder == nil || len(d.chunks) == 0 {
		return
	}
	if b.texts == nil {
		b.texts = make(map[string][]string)
	}
	texts := make([]string, len(d.chunks))
	for i, c := range d.chunks {
		texts[i] = embedText(d, c)
	}
	b.texts[d.Blob] = texts
}

// writeVectors writes the vectors of m's chunks into the index directory.
// A chunk's vector is copied from the previous artifact when the same
// model embedded it there: by the document's blob, or else by the chunk's
// text, so that an edit re-embeds the chunks it changed, not the
// document. The rest are embedded now, each distinct text once.
func (b *indexBuild) writeVectors(ctx context.Context, m *artifact.Manifest) error {
	if b.opts.Embedder == nil {
		return nil
	}
	id := b.opts.Embedder.Identity()
	plan, err := b.planVectors(m)
	if err != nil {
		return err
	}
	vecs, err := b.embed(ctx, plan.texts, id.Dims)
	if err != nil {
		return err
	}
	b.res.Embedded = len(plan.texts)
	if err := b.storeVectors(m, plan, vecs, id.Dims); err != nil {
		return err
	}
	id.Quantization = "int8"
	m.Embeddings = &id
	return nil
}

// vectorPlan says where the vector of each chunk of a document not copied
// by blob comes from.
type vectorPlan struct {
	hashes map[string][]uint64 // blob → its chunks' text hashes
	// sources maps a blob to, for each chunk, a row of the old file (≥ 0)
	// or a slot (-1 - its index in slots).
	sources map[string][]int
	slots   []vectorSlot
	texts   []string // to embed, each content once
}

// A vectorSlot is the vector of one distinct text the old file lacks:
// embedded now (texts[text]), or copied from another artifact's row.
type vectorSlot struct {
	text int // -1 when copied
	row  int // the other artifact's row
}

// planVectors finds, for the documents whose blob the old vectors lack,
// which chunk texts the old file holds and which must be embedded.
func (b *indexBuild) planVectors(m *artifact.Manifest) (*vectorPlan, error) {
	old := b.oldVecs
	var blobs []string
	p := &vectorPlan{hashes: make(map[string][]uint64)}
	needed := make(map[uint64]int) // text hash → its row in the old file, or -1
	for _, d := range m.Documents {
		if _, ok := old.rows[d.Blob]; ok || d.Chunks == 0 {
			continue
		}
		if _, ok := p.hashes[d.Blob]; ok {
			continue
		}
		t, ok := b.texts[d.Blob]
		if !ok || len(t) != d.Chunks {
			return nil, fmt.Errorf("embed %s: its %d chunks were not read by this build", d.Path, d.Chunks)
		}
		hs := make([]uint64, len(t))
		for i, text := range t {
			hs[i] = artifact.TextHash(text)
			needed[hs[i]] = -1
		}
		blobs = append(blobs, d.Blob)
		p.hashes[d.Blob] = hs
	}
	old.findTexts(needed)
	other := make(map[uint64]int) // the texts old lacks → their row in the other file
	for h, row := range needed {
		if row < 0 {
			other[h] = -1
		}
	}
	b.otherVecs.findTexts(other)
	p.sources = make(map[string][]int, len(blobs))
	fresh := make(map[uint64]int) // text hash → its slot
	for _, blob := range blobs {
		src := make([]int, len(p.hashes[blob]))
		for i, h := range p.hashes[blob] {
			if row := needed[h]; row >= 0 {
				src[i] = row
				continue
			}
			j, ok := fresh[h]
			if !ok {
				j = len(p.slots)
				fresh[h] = j
				if row := other[h]; row >= 0 {
					p.slots = append(p.slots, vectorSlot{text: -1, row: row})
				} else {
					p.slots = append(p.slots, vectorSlot{text: len(p.texts)})
					p.texts = append(p.texts, b.texts[blob][i])
				}
			}
			src[i] = -1 - j
		}
		p.sources[blob] = src
	}
	return p, nil
}

// embed embeds texts in batches, saying how far it got.
func (b *indexBuild) embed(ctx context.Context, texts []string, dims int) ([][]float32, error) {
	vecs := make([][]float32, 0, len(texts))
	if b.opts.EmbedProgress != nil && len(texts) > 0 {
		b.opts.EmbedProgress(0, len(texts)) // the first batch may take a while
	}
	for start := 0; start < len(texts); start += embedBatch {
		batch, err := b.opts.Embedder.Embed(ctx, texts[start:min(start+embedBatch, len(texts))])
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		for _, v := range batch {
			if len(v) != dims {
				return nil, fmt.Errorf("embed: the model gave a vector of %d values, not %d", len(v), dims)
			}
		}
		vecs = append(vecs, batch...)
		if b.opts.EmbedProgress != nil {
			b.opts.EmbedProgress(len(vecs), len(texts))
		}
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

// storedVector is a vector as it will be stored, and its text's hash.
type storedVector struct {
	row, bits []byte // bits nil when they are to be computed
	hash      uint64
}

// vectorRows yields every chunk's vector in manifest order: copied from
// the old file, or quantized from vecs, as plan says.
func (b *indexBuild) vectorRows(m *artifact.Manifest, plan *vectorPlan, vecs [][]float32) iter.Seq[storedVector] {
	old := b.oldVecs
	return func(yield func(storedVector) bool) {
		var buf []byte
		for _, d := range m.Documents {
			if start, ok := old.rows[d.Blob]; ok {
				texts := b.texts[d.Blob] // read when the build compiled it
				for i := range d.Chunks {
					h := old.v.TextHash(start + i)
					if h == 0 && len(texts) == d.Chunks {
						h = artifact.TextHash(texts[i]) // a file of the first layout recorded none
					}
					var bits []byte
					if old.v.HasBits() {
						bits = old.v.Bits(start + i)
					}
					if !yield(storedVector{old.v.Row(start + i), bits, h}) {
						return
					}
				}
				continue
			}
			for i, src := range plan.sources[d.Blob] {
				var row, bits []byte
				switch {
				case src >= 0:
					row, bits = old.v.Row(src), old.v.Bits(src)
				case plan.slots[-1-src].text < 0:
					s := plan.slots[-1-src]
					row, bits = b.otherVecs.v.Row(s.row), b.otherVecs.v.Bits(s.row)
				default:
					buf = artifact.Quantize(buf[:0], vecs[plan.slots[-1-src].text])
					row = buf
				}
				if !yield(storedVector{row, bits, plan.hashes[d.Blob][i]}) {
					return
				}
			}
		}
	}
}

// storeVectors writes the index's vectors file.
func (b *indexBuild) storeVectors(m *artifact.Manifest, plan *vectorPlan, vecs [][]float32, dims int) error {
	f, err := os.Create(filepath.Join(b.dir, artifact.VectorsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	vw, err := artifact.NewVectorWriter(bw, dims, m.Counts.Chunks)
	if err != nil {
		return err
	}
	for r := range b.vectorRows(m, plan, vecs) {
		if err = vw.AddQuantized(r.row, r.bits, r.hash); err != nil {
			return err
		}
	}
	places := make([]artifact.Placement, len(m.Documents))
	for i, d := range m.Documents {
		places[i] = artifact.Placement{Seg: d.Seg, Doc: d.Doc, Chunks: uint32(d.Chunks)}
	}
	if err := vw.Close(places); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// oldVectors are the previous artifact's vectors, by document blob.
type oldVectors struct {
	v    *artifact.Vectors
	rows map[string]int // blob → the row of its first chunk
}

// findTexts sets the rows of the old chunks whose texts have the hashes
// in rows, in one pass over the old file's hashes, which a file of the
// first layout does not record.
func (o oldVectors) findTexts(rows map[uint64]int) {
	if o.v == nil || !o.v.HasTextHashes() || len(rows) == 0 {
		return
	}
	for row := range o.v.Count {
		if r, ok := rows[o.v.TextHash(row)]; ok && r < 0 {
			rows[o.v.TextHash(row)] = row
		}
	}
}

// openOldVectors opens the vectors of the previous artifact p when the
// same model made them; without any, b.oldVecs is empty. It returns the
// function that closes them, once the build is done.
func (b *indexBuild) openOldVectors(p *previous) func() {
	if b.opts.Embedder == nil {
		return func() {}
	}
	var unmap func() error
	b.oldVecs, unmap = previousVectors(p, b.opts.Embedder.Identity())
	return func() { unmap() }
}

// openOtherVectors opens the vectors of the artifact in dir when the same
// model made them, for copying by text; without any, b.otherVecs is empty.
func (b *indexBuild) openOtherVectors(dir string) func() {
	if b.opts.Embedder == nil || dir == "" {
		return func() {}
	}
	m, err := artifact.ReadHeader(dir)
	if err != nil || m.Index == "" || !filepath.IsLocal(m.Index) {
		return func() {}
	}
	var unmap func() error
	b.otherVecs, unmap = previousVectors(&previous{m: m, dir: filepath.Join(dir, m.Index)}, b.opts.Embedder.Identity())
	return func() { unmap() }
}

func previousVectors(p *previous, id artifact.Embeddings) (oldVectors, func() error) {
	none := func() error { return nil }
	if p == nil || p.m.Embeddings == nil || !p.m.Embeddings.Same(id) {
		return oldVectors{}, none
	}
	data, unmap, err := mmap.Map(filepath.Join(p.dir, artifact.VectorsFile))
	if err != nil {
		return oldVectors{}, none // embed everything again
	}
	v, err := artifact.ParseVectors(data)
	if err != nil || v.Dims != id.Dims || v.Count != p.m.Counts.Chunks {
		unmap()
		return oldVectors{}, none
	}
	old := oldVectors{v: v, rows: make(map[string]int, len(p.m.Documents))}
	row := 0
	for _, d := range p.m.Documents {
		old.rows[d.Blob] = row
		row += d.Chunks
	}
	return old, unmap
}
