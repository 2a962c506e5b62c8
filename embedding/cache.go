package embedding

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"

	"github.com/kbqdev/kbq/internal/mmap"
)

// CacheFile is kept in a model's directory by Load: what Load otherwise
// works out from the model's files at every start, the tokenizer's
// vocabulary table, the model's fingerprint, its table (table.go) and the
// layers' weights in eight bits for LoadQuantized, twice: as they are and
// in the order of the eight-bit kernel (int8.go), the one a process reads
// of the two depending on its processor. Parsing tokenizer.json
// took 15 ms of a fresh process and the fingerprint 7 ms, and a first
// load with the eight-bit weights takes about 150 ms, where a query has
// 15 ms in all; reading the cache takes about one. It is checked
// against config.json's bytes and the size and modification time of the
// other files; Load rebuilds a cache that does not
// match, and works without one where the directory is read-only. The
// cache is replaced in one rename, never written in place.
const CacheFile = ".kbq-cache"

const cacheMagic = "KBQMODL3"

// fileStamp identifies a version of a file cheaply, as git's index does.
type fileStamp struct{ size, mtime int64 }

func stampOf(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	return fileStamp{fi.Size(), fi.ModTime().UnixNano()}, nil
}

// cached is what the cache holds.
type cached struct {
	tok   *Tokenizer
	hash  string
	table table
	quant []byte // quantLayers of the model
}

// quantAlign is the alignment of the eight-bit weights in the cache.
const quantAlign = 64

// cacheKey is what a cache must have been made from.
type cacheKey struct {
	config             []byte
	tokenizer, weights fileStamp
	weightsName        string
}

func (k cacheKey) append(b []byte) []byte {
	b = append(b, cacheMagic...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(k.config)))
	b = append(b, k.config...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(k.weightsName)))
	b = append(b, k.weightsName...)
	for _, s := range []fileStamp{k.tokenizer, k.weights} {
		b = binary.LittleEndian.AppendUint64(b, uint64(s.size))
		b = binary.LittleEndian.AppendUint64(b, uint64(s.mtime))
	}
	return b
}

// writeCache writes the cache of the model in dir, replacing any, or
// nothing when it cannot.
func writeCache(dir string, key cacheKey, c cached) {
	t := c.tok
	b := key.append(nil)
	b = append(b, c.hash...)
	for _, v := range []int32{t.unk, t.cls, t.sep, int32(t.maxWordChars)} {
		b = binary.LittleEndian.AppendUint32(b, uint32(v))
	}
	var flags byte
	for i, f := range []bool{t.lowercase, t.stripAccents, t.cjk, t.clean} {
		if f {
			flags |= 1 << i
		}
	}
	b = append(b, flags)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.prefix)))
	b = append(b, t.prefix...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(t.vocab.data)))
	b = append(b, t.vocab.data...)
	b = c.table.appendRefs(b)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.table.floats)))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(c.quant)))
	b = append(b, make([]byte, -len(b)&(quantAlign-1))...)
	b = c.table.appendFloats(b)

	f, err := os.CreateTemp(dir, CacheFile+".*")
	if err != nil {
		return
	}
	_, err = f.Write(b)
	if err == nil {
		_, err = f.Write(c.quant)
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), filepath.Join(dir, CacheFile))
	}
	if err != nil {
		os.Remove(f.Name())
	}
}

var errStale = errors.New("the cache is of other files")

// readCache maps the cache of the model in dir, made from key, of a model
// of cfg; the tokenizer and weights it returns read the mapping until
// unmap.
func readCache(dir string, key cacheKey, cfg bertConfig) (c cached, unmap func() error, err error) {
	unmap = func() error { return nil }
	b, unmapFile, err := mmap.MapWhole(filepath.Join(dir, CacheFile))
	if err != nil {
		return cached{}, unmap, err
	}
	defer func() {
		if err != nil {
			unmapFile()
		}
	}()
	want := key.append(nil)
	if !bytes.HasPrefix(b, want) {
		return cached{}, unmap, errStale
	}
	r := cacheReader{b: b[len(want):]}
	c = cached{hash: string(r.next(16))}
	t := &Tokenizer{}
	t.unk, t.cls, t.sep = int32(r.u32()), int32(r.u32()), int32(r.u32())
	t.maxWordChars = int(int32(r.u32()))
	flags := r.next(1)
	t.prefix = string(r.next(int(r.u32())))
	data := r.next(int(r.u32()))
	refs := int(r.u32())
	if refs != tableRefs(cfg) {
		r.bad = true
	}
	for i := 0; i < refs && !r.bad; i++ {
		offset := binary.LittleEndian.Uint64(r.next(8))
		dtype := string(r.next(int(r.u32())))
		c.table.refs = append(c.table.refs, tensorRef{int(min(offset, math.MaxInt)), dtype})
	}
	floats, quant := int(r.u32()), int(r.u32())
	if floats != tableFloats(cfg) || quant != quantLayersSize(cfg) {
		r.bad = true
	}
	r.next(-(len(b) - len(r.b)) & (quantAlign - 1))
	c.table.floats = floatsOf(r.next(4 * floats))
	c.quant = r.next(quant)
	if r.bad || len(r.b) != 0 {
		return cached{}, unmap, errors.New("the cache is damaged")
	}
	t.lowercase, t.stripAccents, t.cjk, t.clean = flags[0]&1 != 0, flags[0]&2 != 0, flags[0]&4 != 0, flags[0]&8 != 0
	if t.vocab, err = openVocab(data); err != nil {
		return cached{}, unmap, err
	}
	c.tok = t
	return c, unmapFile, nil
}

type cacheReader struct {
	b   []byte
	bad bool
}

func (r *cacheReader) next(n int) []byte {
	if r.bad || n < 0 || n > len(r.b) {
		r.bad = true
		return make([]byte, 16) // enough for any fixed field; r.bad says the rest
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

func (r *cacheReader) u32() uint32 { return binary.LittleEndian.Uint32(r.next(4)) }
