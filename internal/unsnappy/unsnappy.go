// Package unsnappy decodes snappy blocks, the compression of the stored
// fields of an artifact's segments, as github.com/golang/snappy's Decode
// does (TestDecodeMatchesSnappy, FuzzDecode). kbq only ever decodes, and
// that package's initialization builds a CRC table for its streams, in
// every process that links it.
package unsnappy

import (
	"encoding/binary"
	"errors"
)

// ErrCorrupt reports a block that is not valid snappy.
var ErrCorrupt = errors.New("snappy: corrupt input")

// DecodedLen returns the length of the decoded block src.
func DecodedLen(src []byte) (int, error) {
	n, _, err := decodedLen(src)
	return n, err
}

func decodedLen(src []byte) (n, header int, err error) {
	v, k := binary.Uvarint(src)
	if k <= 0 || v > 0xffffffff {
		return 0, 0, ErrCorrupt
	}
	if uint64(int(v)) != v || int(v) < 0 {
		return 0, 0, ErrCorrupt
	}
	return int(v), k, nil
}

// Decode returns the decoded form of the block src, in dst when it is
// long enough and a new slice otherwise.
func Decode(dst, src []byte) ([]byte, error) {
	n, k, err := decodedLen(src)
	if err != nil {
		return nil, err
	}
	if n <= len(dst) {
		dst = dst[:n]
	} else {
		dst = make([]byte, n)
	}
	if decode(dst, src[k:]) != 0 {
		return nil, ErrCorrupt
	}
	return dst, nil
}

// decode fills dst, whose length is the decoded length, from the
// elements in src; it returns 0 when they fill it exactly. Short literals
// and copies from a word back or more move words rather than call copy,
// the bytes past them written again by the elements after: the
// repository's markdown decoded at 720–740 MB/s rather than 446–449
// (BenchmarkDecode).
func decode(dst, src []byte) int {
	d, s := 0, 0
	for s < len(src) {
		tag := src[s]
		var length, offset int
		switch tag & 3 {
		case 0: // a literal
			x := uint32(tag >> 2)
			switch {
			case x < 60:
				s++
			case x == 60:
				s += 2
				if s > len(src) {
					return -1
				}
				x = uint32(src[s-1])
			case x == 61:
				s += 3
				if s > len(src) {
					return -1
				}
				x = uint32(src[s-2]) | uint32(src[s-1])<<8
			case x == 62:
				s += 4
				if s > len(src) {
					return -1
				}
				x = uint32(src[s-3]) | uint32(src[s-2])<<8 | uint32(src[s-1])<<16
			default:
				s += 5
				if s > len(src) {
					return -1
				}
				x = uint32(src[s-4]) | uint32(src[s-3])<<8 | uint32(src[s-2])<<16 | uint32(src[s-1])<<24
			}
			length = int(x) + 1
			if length <= 0 || length > len(dst)-d || length > len(src)-s {
				return -1
			}
			if length <= 16 && len(src)-s >= 16 && len(dst)-d >= 16 {
				// A short literal in two words, the bytes past it
				// written again by what follows.
				binary.LittleEndian.PutUint64(dst[d:], binary.LittleEndian.Uint64(src[s:]))
				binary.LittleEndian.PutUint64(dst[d+8:], binary.LittleEndian.Uint64(src[s+8:]))
			} else {
				copy(dst[d:], src[s:s+length])
			}
			d += length
			s += length
			continue
		case 1: // a copy, with an 11-bit offset
			s += 2
			if s > len(src) {
				return -1
			}
			length = 4 + int(tag>>2)&7
			offset = int(uint32(tag&0xe0)<<3 | uint32(src[s-1]))
		case 2: // a copy, with a 16-bit offset
			s += 3
			if s > len(src) {
				return -1
			}
			length = 1 + int(tag>>2)
			offset = int(uint32(src[s-2]) | uint32(src[s-1])<<8)
		default: // a copy, with a 32-bit offset
			s += 5
			if s > len(src) {
				return -1
			}
			length = 1 + int(tag>>2)
			offset = int(binary.LittleEndian.Uint32(src[s-4:]))
		}
		if offset <= 0 || d < offset || length > len(dst)-d {
			return -1
		}
		if offset >= 8 && len(dst)-d >= length+8 {
			// A word at a time: each word read lies at least a word
			// behind, written before, and the bytes past the copy are
			// written again by what follows.
			for i := 0; i < length; i += 8 {
				binary.LittleEndian.PutUint64(dst[d+i:], binary.LittleEndian.Uint64(dst[d-offset+i:]))
			}
			d += length
			continue
		}
		if offset >= length {
			copy(dst[d:d+length], dst[d-offset:])
			d += length
			continue
		}
		// Overlapping: each byte may be one this copy wrote.
		for end := d + length; d < end; d++ {
			dst[d] = dst[d-offset]
		}
	}
	if d != len(dst) {
		return -1
	}
	return 0
}
