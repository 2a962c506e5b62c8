package compiler

import (
	"bufio"
	"context"
	"fmt"
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
	b.Write(d.src.text[c.start:c.end])
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

// writeVectors writes the vectors of m's chunks into the index directory:
// those of documents the previous artifact embedded with the same model
// are copied by blob, the others embedded now.
func (b *indexBuild) writeVectors(ctx context.Context, m *artifact.Manifest) error {
	if b.opts.Embedder == nil {
		return nil
	}
	id := b.opts.Embedder.Identity()
	old := b.oldVecs

	// What must be embedded, in manifest order: each content once, however
	// many paths hold it.
	var texts []string
	fresh := make(map[string]int) // blob → its first text
	for _, d := range m.Documents {
		if _, ok := old.rows[d.Blob]; ok || d.Chunks == 0 {
			continue
		}
		if _, ok := fresh[d.Blob]; ok {
			continue
		}
		t, ok := b.texts[d.Blob]
		if !ok || len(t) != d.Chunks {
			return fmt.Errorf("embed %s: its %d chunks were not read by this build", d.Path, d.Chunks)
		}
		fresh[d.Blob] = len(texts)
		texts = append(texts, t...)
	}
	vecs := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		batch, err := b.opts.Embedder.Embed(ctx, texts[start:min(start+embedBatch, len(texts))])
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		for _, v := range batch {
			if len(v) != id.Dims {
				return fmt.Errorf("embed: the model gave a vector of %d values, not %d", len(v), id.Dims)
			}
		}
		vecs = append(vecs, batch...)
		if b.opts.EmbedProgress != nil {
			b.opts.EmbedProgress(len(vecs), len(texts))
		}
	}
	if len(vecs) != len(texts) {
		return fmt.Errorf("embed: %d vectors for %d texts", len(vecs), len(texts))
	}
	b.res.Embedded = len(texts)

	f, err := os.Create(filepath.Join(b.dir, artifact.VectorsFile))
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<20)
	vw, err := artifact.NewVectorWriter(bw, id.Dims, m.Counts.Chunks)
	if err != nil {
		return err
	}
	for _, d := range m.Documents {
		if start, ok := old.rows[d.Blob]; ok {
			for i := range d.Chunks {
				if err := vw.AddQuantized(old.v.Row(start + i)); err != nil {
					return err
				}
			}
			continue
		}
		start := fresh[d.Blob]
		for i := range d.Chunks {
			if err := vw.Add(vecs[start+i]); err != nil {
				return err
			}
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	id.Quantization = "int8"
	m.Embeddings = &id
	return nil
}

// oldVectors are the previous artifact's vectors, by document blob.
type oldVectors struct {
	v    *artifact.Vectors
	rows map[string]int // blob → the row of its first chunk
}

// openOldVectors opens the previous artifact's vectors when the same
// model made them, before the build reuses its document list; without
// any, rows is empty. The build closes them when it is done.
func (b *indexBuild) openOldVectors() func() {
	if b.opts.Embedder == nil {
		return func() {}
	}
	var unmap func() error
	b.oldVecs, unmap = previousVectors(b.vecPrev, b.opts.Embedder.Identity())
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
