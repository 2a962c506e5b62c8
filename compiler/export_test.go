package compiler

import "time"

// ReleaseMergesEvery has every merge read its segments and release its
// mapped postings' pages every interval, as large merges do, until the
// returned function is called.
func ReleaseMergesEvery(every time.Duration) (restore func()) {
	bytes, was := mapMergeBytes, releaseEvery
	mapMergeBytes, releaseEvery = 0, every
	return func() { mapMergeBytes, releaseEvery = bytes, was }
}
