// Package postings reads and writes the text postings of an index segment:
// for each term of the text fields, the chunks holding it with the term's
// frequency in each field, in blocks of BlockSize chunks that carry what
// top-k search needs to skip them.
//
// Bluge's ice segments keep a separate postings list per field and no
// per-block maxima, and their iterators decode every posting on the way to
// a target: a query over 30 copies of a documentation set spent 81% of its
// time decoding postings it could not skip. A postings file (%012x.kbt)
// sits beside each ice segment and holds the four text fields together, so
// one list answers a BM25F term; the ice segment keeps the stored fields
// and the keyword fields.
//
// The file, little-endian, all offsets from its start:
//
//	postings   for each term, in term order:
//	             uvarint df, uvarint skip length, the list's bound,
//	             skip entries, block data
//	           a skip entry, one per block:
//	             uvarint last-(prevLast+1), uvarint data length,
//	             the block's bound
//	           a bound: per field, uvarint n ≤ MaxPairs, then n pairs of
//	             uvarint frequency, uvarint length
//	           block data, per chunk:
//	             uvarint (doc-(prevDoc+1))<<Fields | field mask,
//	             uvarint freq for each field in the mask
//	dictionary blocks of dictBlock terms, each term:
//	             uvarint shared prefix, uvarint suffix length, suffix,
//	             uvarint offset of its postings
//	index      u32 offset of each dictionary block, from the dictionary
//	lengths    per field, the byte width w (1, 2 or 4) of its lengths;
//	           then per field, its column: the w-byte length of the
//	           field in each chunk
//	documents  u32 number of documents; for each u64 word of starts,
//	           u32 the documents started before it; u32 offset of each
//	           document's entry from the first entry; the entries, in
//	           chunk order: uvarint scope depth, uvarint path length,
//	           path. Search breaks ties with them without reading the
//	           segment's stored fields.
//	starts     bit set of the chunks that start a document, u64 words
//	factors    float64 score factor of each chunk (importance); absent
//	           when every factor is 1
//	footer     see footerLen
//
// prevLast and prevDoc start at -1 for each term. A bound's pairs for a
// field are the (frequency, field length) pairs of the chunks holding the
// term in the field that no other chunk beats on both counts, joined
// (highest frequency, shortest length) while there are more than MaxPairs:
// every chunk is within one of them, which bounds the BM25F score of every
// chunk for any field weights, k1, 0 ≤ b ≤ 1 and average lengths.
package postings
