// Package blocks is how a file published to PostgreSQL is checked a part
// at a time: kbc publish keeps the SHA-256 of every block of a file
// (kbq_file.blocks, schema version 7), so that kbq can read part of a
// file, check that part, and use it before the rest is there.
package blocks

import (
	"crypto/sha256"
	"fmt"
)

// Size is the size of a block; a file's last block is shorter.
const Size = 64 << 10

// Hashes returns the SHA-256 of each block of data, one after another.
func Hashes(data []byte) []byte {
	out := make([]byte, 0, (len(data)+Size-1)/Size*sha256.Size)
	for off := 0; off < len(data); off += Size {
		sum := sha256.Sum256(data[off:min(off+Size, len(data))])
		out = append(out, sum[:]...)
	}
	return out
}

// Valid reports whether hashes can be the block hashes of a file of size
// bytes.
func Valid(hashes []byte, size int64) bool {
	return size >= 0 && int64(len(hashes)) == (size+Size-1)/Size*sha256.Size
}

// Check checks data, the bytes of a file of size bytes from off, a
// multiple of Size, to a block's end or the file's, against the file's
// block hashes, which Valid accepted.
func Check(hashes []byte, size, off int64, data []byte) error {
	end := off + int64(len(data))
	if off%Size != 0 || end > size || (end%Size != 0 && end != size) {
		return fmt.Errorf("bytes %d to %d are not whole blocks of %d", off, end, size)
	}
	for i := 0; i < len(data); i += Size {
		block := (off + int64(i)) / Size
		want := hashes[block*sha256.Size : (block+1)*sha256.Size]
		if sum := sha256.Sum256(data[i:min(i+Size, len(data))]); string(sum[:]) != string(want) {
			return fmt.Errorf("block %d does not match its hash: the database is damaged", block)
		}
	}
	return nil
}
