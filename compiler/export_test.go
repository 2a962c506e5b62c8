package compiler

import "time"

// ReleaseMergesEvery has every merge release the pages of its mapped
// segments and postings every interval and every KiB written, as large
// merges do, until the returned function is called.
func ReleaseMergesEvery(every time.Duration) (restore func()) {
	bytes, was, written := mapMergeBytes, releaseEvery, releaseBytes
	mapMergeBytes, releaseEvery, releaseBytes = 0, every, 1<<10
	return func() { mapMergeBytes, releaseEvery, releaseBytes = bytes, was, written }
}

// WriteSegmentsWithIce has builds write their segments with ice's own
// writer, those joined from their batches too, until the returned
// function is called.
func WriteSegmentsWithIce() (restore func()) {
	was, join, docs := writeIce, joinIce, partDocs
	writeIce, joinIce, partDocs = writeWithIce, joinWithIce, true
	return func() { writeIce, joinIce, partDocs = was, join, docs }
}
