package pgtsv

// first says, for each state, whether ignore is set, and each ASCII
// character (and the end, as 128), which of the state's actions is the
// first whose test holds, or unknown where a test before it depends on
// more than the character and ignore: it is worked out from actions once,
// so that the parser need not try a state's actions one by one.
//
// skip says the same of each character whose action only moves on to the
// next character, in the same state: the parser skips along runs of them
// (the letters of a word, the spaces between words).
var (
	first [sNull][2][129]uint8
	skip  [sNull][2][128]bool
)

const unknown = 255

func init() {
	for st := range sNull {
		for ignore := range 2 {
			for ch := range 129 {
				i := firstAction(st, ignore == 1, ch)
				first[st][ignore][ch] = i
				if i != unknown && ch < 128 {
					a := actions[st][i]
					skip[st][ignore][ch] = a.flags == aNext && a.special == nil && (a.to == sNull || a.to == st)
				}
			}
		}
	}
}

func firstAction(st state, ignore bool, ch int) uint8 {
	p := &parser{ignore: ignore}
	p.stack = []position{{state: st, pushedAt: -1}}
	class := uint8(0)
	if ch < 128 {
		p.s, p.stack[0].charlen, class = string(rune(ch)), 1, classes[ch]
	}
	p.st = &p.stack[0]
	for i, a := range actions[st] {
		switch a.is {
		case isStopHost, isHost, isURLPath:
			return unknown // these depend on more, or change the parser
		}
		if p.holds(a.is, a.c, class) {
			return uint8(i)
		}
	}
	panic("pgtsv: a state without a last action")
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
