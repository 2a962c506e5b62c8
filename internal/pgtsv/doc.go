// Package pgtsv computes PostgreSQL's to_tsvector('english', text) in Go,
// byte for byte as the server's tsvectorsend gives it, so that a publish
// need not have the server parse and stem every new text (the server's
// parser and stemmer were most of a first publish's time).
//
// It reproduces PostgreSQL 15's default text search parser (the "default"
// parser of wparser_def.c: words, hyphenated words and their parts,
// numbers, versions, hosts, e-mail addresses, URLs, file paths, XML tags
// and entities), the english configuration's mapping of token types to the
// english_stem and simple dictionaries, the english stop words, the
// Snowball english stemmer, and how to_tsvector numbers, sorts and merges
// positions.
//
// It answers only for ASCII text, where the server's character classes
// and case folding do not depend on its locale; for any other text, and
// for text whose tsvector would be over the server's limits, [Encoder.English]
// reports false and the server must compute it. A caller that stores the
// result as the server's should also check it against the server (with
// [Probe] and a sample of its texts): a server with a changed english
// configuration, or a locale that folds ASCII letters otherwise (Turkish
// "I"), computes something else, and so does another major version:
// PostgreSQL 18's newer Snowball stems "added" as "add", where 15 gives
// "ad".
package pgtsv
