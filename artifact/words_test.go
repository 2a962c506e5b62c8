package artifact

import (
	"slices"
	"testing"
	"unicode/utf8"
)

// wordsByRune is Words as it was written first, an ASCII byte at a time
// (and wordRune for the other characters, as Words), which Words must
// agree with.
func wordsByRune(text []byte, fn func(start, end int)) {
	start := -1
	for i := 0; i < len(text); {
		c := text[i]
		if c >= utf8.RuneSelf {
			var n int
			start, n = wordRune(text, i, start, fn)
			i += n
			continue
		}
		switch {
		case isASCIIWordByte(c):
			if start < 0 {
				start = i
			}
		case c == '\'' && start >= 0 && i+1 < len(text) && isLetterAt(text, i+1) && isLetterBefore(text, i):
		default:
			if start >= 0 {
				fn(start, i)
				start = -1
			}
		}
		i++
	}
	if start >= 0 {
		fn(start, len(text))
	}
}

func checkWords(t *testing.T, text string) {
	var got, want [][2]int
	Words([]byte(text), func(s, e int) { got = append(got, [2]int{s, e}) })
	wordsByRune([]byte(text), func(s, e int) { want = append(want, [2]int{s, e}) })
	if !slices.Equal(got, want) {
		t.Errorf("%q: got %v, want %v", text, got, want)
	}
}

var wordTexts = []string{
	"", "a", "don't stop", "it's 'quoted' o'clock's", "x' 'y '' a''b",
	"café naïve déjà-vu", "東京タワー and ひらがな", "l’été c’est", "a\u0301b ́x",
	"snake_case camelCase HTTP2 3.14 v1.2.3", "\xff\xfeab\xc3", "end'", "'start",
	"tab\tnew\nline\r\n", "ｆｕｌｌ　ｗｉｄｔｈ", "٣٤ ⅷ ²",
}

func TestWordsAgree(t *testing.T) {
	for _, text := range wordTexts {
		checkWords(t, text)
	}
}

func FuzzWords(f *testing.F) {
	for _, text := range wordTexts {
		f.Add(text)
	}
	f.Fuzz(checkWords)
}

// BenchmarkWords tokenizes prose with markdown, code and a little
// non-ASCII text, as documentation has: Words, and wordsByRune beside it.
func BenchmarkWords(b *testing.B) {
	var text []byte
	for len(text) < 1<<20 {
		text = append(text, "## Get-ChildItem\n\nThe `Get-ChildItem` cmdlet gets the items in one or more specified locations. If the item is a container, it gets the items inside the container, known as child items. You can use the **Recurse** parameter to get items in all child containers, and it's `-Depth 2` that limits them ([about_Providers](about_Providers.md)). Café, naïve, l’été.\n\n```powershell\nGet-ChildItem -Path C:\\Test -Recurse -Depth 2 | Select-Object Name, Length\n```\n\n"...)
	}
	for _, bench := range []struct {
		name  string
		words func([]byte, func(int, int))
	}{{"Words", Words}, {"byRune", wordsByRune}} {
		b.Run(bench.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			n := 0
			for b.Loop() {
				bench.words(text, func(start, end int) { n += end - start })
			}
			_ = n
		})
	}
}
