// Package syntax is kbq's query language: the clauses a query is made of
// and the parser that reads them. It is pure: no index, no I/O. The search
// engine (package query) plans and runs what it parses.
package syntax

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kbqdev/kbq/knowledge"
)

// Occur says how a clause takes part in a query.
type Occur int

const (
	Should  Occur = iota // ranks documents that match; one should clause must match when nothing is required
	Must                 // required
	MustNot              // excluded
)

// ClauseKind is what a clause matches.
type ClauseKind int

const (
	Word     ClauseKind = iota // a word, analyzed like the text fields
	Phrase                     // words next to each other, in order
	Prefix                     // words starting with Text
	Wildcard                   // words matching Text, where * and ? are wildcards
	Filter                     // an exact facet: Field is tag, kind, scope or path
	Any                        // an OR group of Sub clauses
	All                        // every document (a lone *)
)

// Clause is one part of a parsed query.
type Clause struct {
	Occur Occur
	Kind  ClauseKind
	// Field restricts a word, phrase or prefix to one field ("title"), or
	// names a filter's facet; "" searches every text field.
	Field string
	Text  string
	Sub   []Clause
}

// Parsed is a parsed query.
type Parsed struct {
	Clauses []Clause
}

// filterFields are the field names a field:value term may use, beside
// the registry's Meta keys that are filters (owner:).
var filterFields = map[string]bool{"tag": true, "kind": true, "scope": true, "path": true, "topic": true, "status": true, "updated": true, "author": true, "repo": true}

func isFilterField(name string) bool { return filterFields[name] || knowledge.IsFilter(name) }

// Parse parses the query language:
//
//	retry backoff          words, ranked BM25 over any of them
//	+retry, a AND b        required words
//	"exact phrase"         a phrase: documents holding it rank first
//	+"exact phrase"        a required phrase
//	a OR b                 either
//	-word, NOT word        excluded
//	deploy*                a prefix; * and ? inside a word are wildcards
//	tag:x kind:memory scope:services/api path:docs/ topic:deploy/steps   filters
//	status:deprecated      documents of a status (active, draft, deprecated, superseded)
//	updated:>2026-06-01    last changed in git after that day; updated:<90d, older than 90 days
//	author:ada             last changed by an author whose name holds "ada"
//	owner:platform         a Meta key of the registry that is a filter (knowledge.Keys)
//	repo:api               one of several repositories searched together
//	title:rollback         a word (or "phrase") in titles only
//
// Any other punctuation is text: + and - are operators only before a
// letter or a quote ("+1 SD" and "IL-2 and -3" are prose), and a ? that
// ends a word ends a question. Parse never fails: unbalanced quotes end
// at the end of the query, operators without operands are dropped.
func Parse(q string) Parsed {
	toks := lex(q)
	var units []Clause
	pendingAnd, pendingOr, pendingNot := false, false, false
	for _, t := range toks {
		if !t.quoted && t.prefix == 0 && t.field == "" {
			switch t.text {
			case "AND", "&&":
				pendingAnd = len(units) > 0
				continue
			case "OR", "||":
				pendingOr = len(units) > 0
				continue
			case "NOT":
				pendingNot = true
				continue
			}
		}
		c, ok := t.clause()
		if !ok {
			continue
		}
		if pendingNot {
			c.Occur = MustNot
		}
		switch {
		case pendingOr && c.Occur != MustNot && units[len(units)-1].Occur != MustNot:
			last := &units[len(units)-1]
			if last.Kind != Any || last.Occur == MustNot {
				*last = Clause{Kind: Any, Occur: Should, Sub: []Clause{*last}}
			}
			c.Occur = Should
			last.Sub = append(last.Sub, c)
		default:
			if pendingAnd && c.Occur == Should {
				c.Occur = Must
			}
			if pendingAnd && units[len(units)-1].Occur == Should {
				units[len(units)-1].Occur = Must
			}
			units = append(units, c)
		}
		pendingAnd, pendingOr, pendingNot = false, false, false
	}
	for i := range units {
		units[i] = settle(units[i])
	}
	return Parsed{Clauses: units}
}

// settle gives groups their final form: an OR group of plain words is just
// those words ranked together; a group holding filters or phrases must have
// one member match.
func settle(c Clause) Clause {
	if c.Kind != Any {
		return c
	}
	for i := range c.Sub {
		c.Sub[i].Occur = Should
	}
	if c.Occur == Should {
		for _, s := range c.Sub {
			if s.Kind == Filter || s.Kind == Phrase || s.Field != "" {
				c.Occur = Must
				break
			}
		}
	}
	return c
}

// token is a lexical item: a word, a quoted phrase, or field:value.
type token struct {
	prefix byte // '+', '-' or 0
	field  string
	text   string
	quoted bool
}

func (t token) clause() (Clause, bool) {
	c := Clause{Occur: Should, Text: t.text, Field: t.field}
	switch t.prefix {
	case '+':
		c.Occur = Must
	case '-':
		c.Occur = MustNot
	}
	if !t.quoted && !isFilterField(t.field) {
		// A question mark that ends a word ends a sentence: "ranked?" is
		// the word; one inside a word ("te?t") stays a wildcard.
		c.Text = strings.TrimRight(c.Text, "?")
		if c.Text == "" && t.text != "" && t.field == "" {
			return c, false
		}
	}
	if strings.TrimSpace(c.Text) == "" {
		return c, false
	}
	switch {
	case isFilterField(t.field):
		c.Kind = Filter
		if c.Occur == Should {
			c.Occur = Must
		}
	case t.quoted:
		// A bare "phrase" ranks like a word, documents holding it first;
		// +"phrase" requires it, as Lucene's parser does with OR as the
		// default operator.
		c.Kind = Phrase
	case c.Text == "*":
		c.Kind = All
	case strings.HasSuffix(c.Text, "*") && !strings.ContainsAny(c.Text[:len(c.Text)-1], "*?"):
		c.Kind, c.Text = Prefix, strings.TrimSuffix(c.Text, "*")
	case strings.ContainsAny(c.Text, "*?") && strings.IndexFunc(c.Text, isWordRune) >= 0:
		c.Kind = Wildcard
	default:
		c.Kind = Word
	}
	if c.Field == "title" && c.Occur == Should {
		c.Occur = Must
	}
	return c, true
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// knownFields may prefix a value: tag:x, as may the registry's filters.
// Other "word:" text stays text.
var knownFields = map[string]bool{"tag": true, "kind": true, "scope": true, "path": true, "topic": true, "title": true, "status": true, "updated": true, "author": true, "repo": true}

func isKnownField(name string) bool { return knownFields[name] || knowledge.IsFilter(name) }

// lex splits a query into tokens at white space, keeping quoted text
// together.
func lex(q string) []token {
	var toks []token
	for i := 0; i < len(q); {
		r, n := utf8.DecodeRuneInString(q[i:])
		if unicode.IsSpace(r) {
			i += n
			continue
		}
		var t token
		if (q[i] == '+' || q[i] == '-') && operandAt(q, i+1) {
			t.prefix = q[i]
			i++
		}
		// field:value, value possibly quoted
		if j := strings.IndexByte(q[i:], ':'); j > 0 && isKnownField(strings.ToLower(q[i:i+j])) && !strings.ContainsAny(q[i:i+j], " \t\n\"") {
			if k := i + j + 1; k < len(q) && !isSpaceAt(q, k) {
				t.field = strings.ToLower(q[i : i+j])
				i = k
			}
		}
		if i < len(q) && q[i] == '"' {
			end := strings.IndexByte(q[i+1:], '"')
			if end < 0 {
				t.text, i = q[i+1:], len(q)
			} else {
				t.text, i = q[i+1:i+1+end], i+end+2
			}
			t.quoted = true
			toks = append(toks, t)
			continue
		}
		start := i
		for i < len(q) {
			r, n := utf8.DecodeRuneInString(q[i:])
			if unicode.IsSpace(r) {
				break
			}
			i += n
		}
		t.text = q[start:i]
		toks = append(toks, t)
	}
	return toks
}

// operandAt reports whether what starts at i can follow a + or - that is
// an operator: a letter or a quote. Elsewhere the sign is prose: "+1 SD",
// "-3 receptors", "-0.5".
func operandAt(s string, i int) bool {
	if i >= len(s) {
		return false
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r == '"' || unicode.IsLetter(r)
}

func isSpaceAt(s string, i int) bool {
	r, _ := utf8.DecodeRuneInString(s[i:])
	return unicode.IsSpace(r)
}
