package artifact

import (
	"strings"

	"github.com/blugelabs/bluge/analysis/lang/en"
)

// stopwordLists are the stop word lists an Analysis may name.
var stopwordLists = map[string]map[string]bool{
	"none":     nil,
	"lucene":   wordSet(strings.Fields(luceneStopwords)),
	"snowball": snowballStopwords(),
}

// luceneStopwords is EnglishAnalyzer.ENGLISH_STOP_WORDS_SET of Apache Lucene.
const luceneStopwords = `a an and are as at be but by for if in into is it no not of on or
such that the their then there these they this to was will with`

func snowballStopwords() map[string]bool {
	set := make(map[string]bool)
	for word := range en.StopWords() {
		set[word] = true
	}
	return set
}

func wordSet(words []string) map[string]bool {
	set := make(map[string]bool, len(words))
	for _, w := range words {
		set[w] = true
	}
	return set
}
