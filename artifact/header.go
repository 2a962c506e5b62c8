package artifact

import (
	"bytes"
	"time"
	"unicode"
	"unicode/utf8"
)

// Every kbq process reads the manifest's header, and the reflective JSON
// decoders take most of a millisecond to do it in a fresh process (building
// their codecs touches type metadata and code that nothing else needs):
// as much as the rest of opening an artifact. So the header, like the
// document table, has a reader of its own, and only it: any JSON object
// whose known keys hold values of their types reads, a key it does not
// know (another version's) is skipped, and anything else is corrupt.
// TestDecodeHeader holds it to encoding/json on every field Encode
// writes, and FuzzDecodeHeader on whatever it accepts.

// decodeHeader reads the manifest object in data, which holds no
// documents, into m. It returns the offset at which data stops being a
// header, leaving m partly set, or -1.
func decodeHeader(data []byte, m *Manifest) int {
	s := jsonScanner{data: data}
	ok := s.fields(func(key string) bool {
		var ok bool
		switch key {
		case "checksum":
			m.Checksum, ok = s.str()
		case "documents_sha256":
			m.DocumentsSHA256, ok = s.str()
		case "format":
			m.Format, ok = s.str()
		case "format_version":
			m.FormatVersion, ok = s.int()
		case "compiler_version":
			m.CompilerVersion, ok = s.str()
		case "build_key":
			m.BuildKey, ok = s.str()
		case "index":
			m.Index, ok = s.str()
		case "ages":
			m.Ages, ok = s.str()
		case "source":
			ok = s.source(&m.Source)
		case "built_at":
			m.BuiltAt, ok = s.time()
		case "global":
			ok = s.global(&m.Global)
		case "analysis":
			ok = s.analysis(&m.Analysis)
		case "counts":
			ok = s.counts(&m.Counts)
		case "fields":
			m.Fields, ok = s.fieldStats(m.Fields)
		case "config":
			ok = s.config(&m.Config)
		case "retired":
			m.Retired, ok = s.strMap(m.Retired)
		case "statuses":
			m.Statuses, ok = s.strMap(m.Statuses)
		case "disputed":
			m.Disputed, ok = s.listMap(m.Disputed)
		case "embeddings":
			if s.null() {
				m.Embeddings, ok = nil, true
			} else {
				if m.Embeddings == nil {
					m.Embeddings = new(Embeddings)
				}
				ok = s.embeddings(m.Embeddings)
			}
		default:
			ok = s.skip(0)
		}
		return ok
	})
	s.space()
	if !ok || s.i != len(data) {
		return s.i
	}
	return -1
}

// tok consumes c if it comes next, after any white space.
func (s *jsonScanner) tok(c byte) bool {
	s.space()
	return s.next(c)
}

// word consumes w if it comes next, after any white space.
func (s *jsonScanner) word(w string) bool {
	s.space()
	if !bytes.HasPrefix(s.data[s.i:], []byte(w)) {
		return false
	}
	s.i += len(w)
	return true
}

// null consumes a null if it comes next.
func (s *jsonScanner) null() bool { return s.word("null") }

// object reads an object, calling value with each key to read its value,
// white space allowed between tokens.
func (s *jsonScanner) object(value func(key string) bool) bool {
	if !s.tok('{') {
		return false
	}
	if s.tok('}') {
		return true
	}
	for {
		s.space()
		key, ok := s.str()
		if !ok || !s.tok(':') {
			return false
		}
		s.space()
		if !value(key) {
			return false
		}
		if s.tok('}') {
			return true
		}
		if !s.tok(',') {
			return false
		}
	}
}

// fields reads an object of a struct's fields, whose keys match without
// regard to case (foldKey), as encoding/json matches them.
func (s *jsonScanner) fields(value func(key string) bool) bool {
	return s.object(func(key string) bool { return value(foldKey(key)) })
}

// foldKey matches keys as encoding/json does, without regard to case
// (Unicode's simple folding): a key written otherwise than in lower case
// is lowered when that makes it ASCII, else left to match nothing.
func foldKey(key string) string {
	plain := true
	for i := 0; i < len(key); i++ {
		if c := key[i]; c >= utf8.RuneSelf || 'A' <= c && c <= 'Z' {
			plain = false
			break
		}
	}
	if plain {
		return key
	}
	folded := make([]byte, 0, len(key))
	for _, r := range key {
		// The least rune of r's orbit under simple folding: 'S' for 's'
		// and 'ſ', 'K' for the Kelvin sign.
		for {
			next := unicode.SimpleFold(r)
			if next <= r {
				r = next
				break
			}
			r = next
		}
		if r >= utf8.RuneSelf {
			return key
		}
		folded = append(folded, byte(unicode.ToLower(r)))
	}
	return string(folded)
}

// boolean reads true or false.
func (s *jsonScanner) boolean() (v, ok bool) {
	if s.word("true") {
		return true, true
	}
	return false, s.word("false")
}

// time reads a time as time.Time's JSON encoding writes it, and nothing
// it would write otherwise.
func (s *jsonScanner) time() (time.Time, bool) {
	v, ok := s.str()
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	return t, err == nil && t.Format(time.RFC3339Nano) == v
}

// list reads an array of strings, or null as nil.
func (s *jsonScanner) list() ([]string, bool) {
	if s.null() {
		return nil, true
	}
	return s.strs()
}

// counter reads an object of integers into out (a key given twice adds
// to the map, as encoding/json does), or null as nil.
func (s *jsonScanner) counter(out map[string]int) (map[string]int, bool) {
	if s.null() {
		return nil, true
	}
	if out == nil {
		out = map[string]int{}
	}
	ok := s.object(func(key string) bool {
		n, ok := s.int()
		out[key] = n
		return ok
	})
	return out, ok
}

func (s *jsonScanner) strMap(out map[string]string) (map[string]string, bool) {
	if s.null() {
		return nil, true
	}
	if out == nil {
		out = map[string]string{}
	}
	ok := s.object(func(key string) bool {
		v, ok := s.str()
		out[key] = v
		return ok
	})
	return out, ok
}

// listMap reads an object of string lists into out, or null as nil.
func (s *jsonScanner) listMap(out map[string][]string) (map[string][]string, bool) {
	if s.null() {
		return nil, true
	}
	if out == nil {
		out = map[string][]string{}
	}
	ok := s.object(func(key string) bool {
		v, ok := s.list()
		out[key] = v
		return ok
	})
	return out, ok
}

func (s *jsonScanner) fieldStats(out map[string]FieldStats) (map[string]FieldStats, bool) {
	if s.null() {
		return nil, true
	}
	if out == nil {
		out = map[string]FieldStats{}
	}
	ok := s.object(func(field string) bool {
		var f FieldStats // a key given twice: the last wins whole, as in encoding/json
		ok := s.fields(func(key string) bool {
			var ok bool
			switch key {
			case "docs":
				f.Docs, ok = s.uint(64)
			case "tokens":
				f.Tokens, ok = s.uint(64)
			default:
				ok = s.skip(0)
			}
			return ok
		})
		out[field] = f
		return ok
	})
	return out, ok
}

func (s *jsonScanner) source(src *Source) bool {
	return s.fields(func(key string) bool {
		var ok bool
		switch key {
		case "mode":
			src.Mode, ok = s.str()
		case "rev":
			src.Rev, ok = s.str()
		case "commit":
			src.Commit, ok = s.str()
		case "tree":
			src.Tree, ok = s.str()
		case "dirty":
			src.Dirty, ok = s.boolean()
		case "shallow":
			src.Shallow, ok = s.boolean()
		default:
			ok = s.skip(0)
		}
		return ok
	})
}

func (s *jsonScanner) global(g *Global) bool {
	return s.fields(func(key string) bool {
		var ok bool
		switch key {
		case "included":
			g.Included, ok = s.boolean()
		case "hash":
			g.Hash, ok = s.str()
		default:
			ok = s.skip(0)
		}
		return ok
	})
}

func (s *jsonScanner) analysis(a *Analysis) bool {
	return s.fields(func(key string) bool {
		var ok bool
		switch key {
		case "stemmer":
			a.Stemmer, ok = s.str()
		case "stopwords":
			a.Stopwords, ok = s.str()
		case "fold":
			a.Fold, ok = s.str()
		default:
			ok = s.skip(0)
		}
		return ok
	})
}

func (s *jsonScanner) counts(c *Counts) bool {
	return s.fields(func(key string) bool {
		var ok bool
		switch key {
		case "documents":
			c.Documents, ok = s.int()
		case "chunks":
			c.Chunks, ok = s.int()
		case "by_kind":
			c.ByKind, ok = s.counter(c.ByKind)
		case "by_scope":
			c.ByScope, ok = s.counter(c.ByScope)
		case "shadowing":
			c.Shadowing, ok = s.list()
		default:
			ok = s.skip(0)
		}
		return ok
	})
}

func (s *jsonScanner) config(c *Config) bool {
	return s.fields(func(key string) bool {
		var ok bool
		switch key {
		case "hash":
			c.Hash, ok = s.str()
		case "org":
			c.Org, ok = s.list()
		case "min_score":
			if s.null() {
				c.MinScore, ok = nil, true
			} else {
				var f float64
				f, ok = s.float()
				c.MinScore = &f
			}
		case "budgets":
			ok = s.fields(func(key string) bool {
				var ok bool
				switch key {
				case "global":
					c.Budgets.Global, ok = s.int()
				case "project":
					c.Budgets.Project, ok = s.int()
				case "directory":
					c.Budgets.Directory, ok = s.int()
				case "total":
					c.Budgets.Total, ok = s.int()
				default:
					ok = s.skip(0)
				}
				return ok
			})
		default:
			ok = s.skip(0)
		}
		return ok
	})
}

func (s *jsonScanner) embeddings(e *Embeddings) bool {
	return s.fields(func(key string) bool {
		var ok bool
		switch key {
		case "provider":
			e.Provider, ok = s.str()
		case "model":
			e.Model, ok = s.str()
		case "hash":
			e.Hash, ok = s.str()
		case "url":
			e.URL, ok = s.str()
		case "key_env": // written by kbc before 0.9; never read for a key
			_, ok = s.str()
		case "dims":
			e.Dims, ok = s.int()
		case "quantization":
			e.Quantization, ok = s.str()
		default:
			ok = s.skip(0)
		}
		return ok
	})
}
