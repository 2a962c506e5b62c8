package artifact

import "github.com/kbqdev/kbq/artifact/postings"

// Every on-disk format of an artifact, with its history. A change to any
// of them changes its version here, and a change a reader cannot take in
// its stride bumps FormatVersion too, which makes kbq refuse the artifact
// and kbc build it afresh.
//
//	manifest.json       the commit point: a JSON header (manifest.go)
//	index-*/            an index, named by what it holds:
//	  *.seg, snapshot   Bluge's ice segments and snapshot (snapshot.go)
//	  *.kbqt            text postings with block maxima (package postings)
//	  documents         the document table (doctable.go)
//	  vectors           chunk vectors, when built with embeddings (vectors.go)
//	ages-*              each document's last change (ages.go)
//	worktree.stamps     what a working-tree build saw on disk (worktree.go)
const (
	// FormatVersion is the artifact's version, in every manifest.
	//
	//	1  the first artifact: manifest with documents, Bluge segments
	//	2  text postings in kbq's own files beside the segments
	//	3  field lengths kept in a column per field
	//	4  the manifest carries checksums of its header and its documents
	//	5  documents move to a table in the index directory, with a
	//	   generated codec; the manifest is only the header
	FormatVersion = 5

	// DocumentLayout changes when what kbc records of a document changes,
	// so that an incremental build does not mix documents compiled both
	// ways; it is part of the build key.
	//
	//	4  the blob in the first chunk; importance, creation and expiry
	//	5  long lines cut between sentences, with overlap
	//	6  the description searched with the title
	//	7  status and supersedes
	//	8  the last commit, author and time
	//	9  Meta keys (owner) stored and filtered on
	//	10 the headings of context documents, as the markdown parser reads
	//	   them; a chunk merged from sections that share no heading names each
	//	11 contradicts
	DocumentLayout = 11

	// documentsMagic starts a document table.
	//
	//	KBQDOC01  the first table
	//	KBQDOC02  and the headings of context documents (Document.Headings)
	//	KBQDOC03  and the documents each disputes (Document.Contradicts)
	documentsMagic   = "KBQDOC03"
	documentsMagicV2 = "KBQDOC02"
	documentsMagicV1 = "KBQDOC01"

	// vectorsMagic starts a vectors file; readers still take the older
	// layouts.
	//
	//	KBQVEC01  int8 vectors with a scale each
	//	KBQVEC02  and the sign bits of each, for a first pass, and the hash
	//	          of each vector's text, so builds re-embed only changes
	//	KBQVEC03  and the documents' placements, so a search needs no
	//	          document list
	vectorsMagic   = "KBQVEC03"
	vectorsMagicV2 = "KBQVEC02"
	vectorsMagicV1 = "KBQVEC01"

	// agesMagic starts an ages table.
	//
	//	KBQAGES1  the first table
	agesMagic = "KBQAGES1"

	// worktreeHeader starts the worktree record.
	//
	//	kbq-worktree 1  the first record
	worktreeHeader = "kbq-worktree 1"

	// PostingsVersion is the version of the postings files (postings.Version).
	//
	//	1  postings with per-block maxima
	//	2  field lengths in a column per field, as narrow as each needs
	PostingsVersion = postings.Version

	// snapshotFormat is Bluge's snapshot format version.
	snapshotFormat = 1
)
