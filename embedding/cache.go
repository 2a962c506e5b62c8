package embedding

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"

	"github.com/kbqdev/kbq/internal/mmap"
)

// CacheFile is kept in a model's directory by Load: what Load otherwise
// works out from the model's files at every start, the tokenizer's
// vocabulary table and the model's fingerprint. Parsing tokenizer.json
// took 15 ms of a fresh process and the fingerprint 7 ms, where a query
// has 15 ms in all; reading the cache takes well under one. It is checked
// against config.json's bytes and the size and modification time of the
// other files; Load rebuilds a cache that does not
// match, and works without one where the directory is read-only. The
// cache is replaced in one rename, never written in place.
const CacheFile = ".kbq-cache"

const cacheMagic = "KBQMODL1"

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
	tok  *Tokenizer
	hash string
}

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

	f, err := os.CreateTemp(dir, CacheFile+".*")
	if err != nil {
		return
	}
	_, err = f.Write(b)
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

// readCache maps the cache of the model in dir, made from key; the
// tokenizer it returns reads the mapping until unmap.
func readCache(dir string, key cacheKey) (c cached, unmap func() error, err error) {
	unmap = func() error { return nil }
	b, unmapFile, err := mmap.Map(filepath.Join(dir, CacheFile))
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
