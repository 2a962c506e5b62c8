package checks

import (
	"github.com/kbqdev/kbq/knowledge"

	"bytes"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
)

// The secret guard: knowledge is committed and shared, so credentials in it
// are errors. The rules are a subset of gitleaks' default rule set
// (github.com/gitleaks/gitleaks, config/gitleaks.toml, MIT licence): the
// providers most likely to leak into notes, with gitleaks' regexes and
// entropy floors. Gitleaks itself was measured too slow to run on every
// knowledge file (0.46 MB/s, plus 48 ms to load its rules), so rules here
// run only on lines that hold one of their keywords.
//
// A line that is not a secret (an example in documentation, say) is marked
// with "kbq:allow-secret" (or gitleaks' "gitleaks:allow") anywhere on it;
// for a private key block, on its BEGIN line.

// secretRule is one kind of secret.
type secretRule struct {
	name     string
	keywords []string              // lowercase; the rule runs only on lines holding one
	re       func() *regexp.Regexp // compiled on first use
	group    int                   // the submatch holding the secret; 0 for the whole match
	entropy  float64               // minimum Shannon entropy of the secret, bits per byte
	block    bool                  // matches across lines (private keys)
	generic  bool                  // a key name and a value: the value must look random
	// urlPassword: the secret is a URL's password, a placeholder unless
	// it is more than a word that names one.
	urlPassword bool
	// maybe, when set, says whether a match of re could hold the keyword
	// at line[off:], a test far cheaper than re that lets no match
	// through: the rule's regexp runs only on lines where one could.
	maybe func(line []byte, off int) bool
}

var secretRules = []secretRule{
	{name: "private key", keywords: []string{"-----begin"}, block: true,
		re: lazyRegexp(`(?i)-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----[\s\S-]{64,}?KEY(?: BLOCK)?-----`)},
	{name: "AWS access key", keywords: []string{"akia", "asia", "abia", "acca", "a3t"}, entropy: 3, group: 1,
		re: lazyRegexp(`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b`)},
	{name: "GitHub token", keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, entropy: 3,
		re: lazyRegexp(`(?:ghp|gho|ghu|ghs|ghr)_[0-9a-zA-Z]{36}`)},
	{name: "GitHub fine-grained token", keywords: []string{"github_pat_"}, entropy: 3,
		re: lazyRegexp(`github_pat_\w{82}`)},
	{name: "GitLab token", keywords: []string{"glpat-"}, entropy: 3,
		re: lazyRegexp(`glpat-[\w-]{20}`)},
	{name: "Slack token", keywords: []string{"xoxb", "xoxp", "xoxe", "xoxa"}, entropy: 2,
		re: lazyRegexp(`xox[bpea]-[0-9]{10,13}-[0-9a-zA-Z-]{10,}`)},
	{name: "Slack webhook", keywords: []string{"hooks.slack.com"},
		re: lazyRegexp(`(?:https?://)?hooks.slack.com/(?:services|workflows|triggers)/[A-Za-z0-9+/]{43,56}`)},
	{name: "Stripe key", keywords: []string{"sk_", "rk_"}, entropy: 2, group: 1,
		re: lazyRegexp(`\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})(?:[\x60'"\s;]|\\[nr]|$)`)},
	{name: "Google API key", keywords: []string{"aiza"}, entropy: 4, group: 1,
		re: lazyRegexp(`\b(AIza[\w-]{35})(?:[\x60'"\s;]|\\[nr]|$)`)},
	{name: "OpenAI API key", keywords: []string{"t3blbkfj", "sk-proj-", "sk-svcacct-", "sk-admin-"}, entropy: 3.5, group: 1,
		re: lazyRegexp(`\b(sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,300}|[A-Za-z0-9_-]{16,100}T3BlbkFJ[A-Za-z0-9_-]{16,100}))(?:[\x60'"\s;,)]|\\[nr]|$)`)},
	{name: "Anthropic API key", keywords: []string{"sk-ant-"}, entropy: 3.5, group: 1,
		re: lazyRegexp(`\b(sk-ant-[a-z]{2,8}\d{2}-[A-Za-z0-9_-]{32,200})(?:[\x60'"\s;,)]|\\[nr]|$)`)},
	{name: "npm token", keywords: []string{"npm_"}, entropy: 2, group: 1,
		re: lazyRegexp(`(?i)\b(npm_[a-z0-9]{36})(?:[\x60'"\s;]|\\[nr]|$)`)},
	{name: "PyPI token", keywords: []string{"pypi-ageichlwas5vcmc"}, entropy: 3,
		re: lazyRegexp(`pypi-AgEIcHlwaS5vcmc[\w-]{50,1000}`)},
	{name: "SendGrid key", keywords: []string{"sg."}, entropy: 2, group: 1,
		re: lazyRegexp(`\b(SG\.(?i)[a-z0-9=_\-\.]{66})(?:[\x60'"\s;]|\\[nr]|$)`)},
	{name: "DigitalOcean token", keywords: []string{"doo_v1_", "dop_v1_"}, entropy: 3, group: 1,
		re: lazyRegexp(`\b(do[op]_v1_[a-f0-9]{64})(?:[\x60'"\s;]|\\[nr]|$)`)},
	{name: "Azure client secret", keywords: []string{"q~"}, entropy: 3, group: 1,
		re: lazyRegexp(`(?:^|[\\'"\x60\s>=:(,)])([a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34})(?:$|[\\'"\x60\s<),])`)},
	{name: "JSON web token", keywords: []string{"eyj"}, entropy: 3, group: 1,
		re: lazyRegexp(`\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9\/\\_-]{17,}\.(?:[a-zA-Z0-9\/\\_-]{10,}={0,2})?)(?:[\x60'"\s;]|\\[nr]|$)`)},
	{name: "Twilio API key", keywords: []string{"sk"}, entropy: 3, group: 1, maybe: twilioKey,
		re: lazyRegexp(`(?:^|[^A-Za-z0-9_])(SK[0-9a-fA-F]{32})(?:[^A-Za-z0-9_]|$)`)},
	{name: "Azure storage account key", keywords: []string{"accountkey"}, entropy: 4, group: 1,
		re: lazyRegexp(`(?i)AccountKey\s{0,3}=\s{0,3}([A-Za-z0-9+/]{40,100}={0,2})`)},
	// A password inside a URL: scheme://user:password@host.
	{name: "password in a URL", keywords: []string{"://"}, group: 1, urlPassword: true, maybe: userAndPassword,
		re: lazyRegexp(`\b[A-Za-z][A-Za-z0-9+.-]{1,20}://[^\s/:@'"\x60<>]{1,100}:([^\s/@'"\x60<>]{3,200})@[A-Za-z0-9[]`)},
	// An opaque bearer token in an Authorization header.
	{name: "bearer token", keywords: []string{"bearer"}, entropy: 3.5, group: 1, generic: true,
		re: lazyRegexp(`(?i)\bbearer\s{1,3}([A-Za-z0-9._~+/-]{20,500}=*)(?:[\x60'"\s;,)]|\\[nr]|$)`)},
	// password=, api_key: and the like with a value that looks random.
	{name: "credential assignment", entropy: 3.5, group: 1, generic: true, maybe: nameAssigned,
		keywords: []string{"passw", "pwd", "secret", "token", "api_key", "apikey", "api-key", "access_key", "accesskey", "access-key", "auth"},
		re:       lazyRegexp(`(?i)(?:passw(?:or)?d|pwd|secret|token|api[_-]?key|access[_-]?key|client[_-]?secret|auth[_-]?key)["']?\s{0,3}(?:=|:|=>|:=)\s{0,3}["'\x60]?([A-Za-z0-9+/_.=~!@#$%^&*-]{12,150})`)},
}

// twilioKey: "SK" in capitals and 32 hexadecimal digits.
func twilioKey(line []byte, off int) bool {
	if off+34 > len(line) || line[off] != 'S' || line[off+1] != 'K' {
		return false
	}
	for _, c := range line[off+2 : off+34] {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}

// userAndPassword: after "://", a user, a colon, a password and an "@",
// none of them holding a byte the URL rule excludes.
func userAndPassword(line []byte, off int) bool {
	colon := false
	for _, c := range line[off+3:] {
		switch {
		case c == ' ' || c == '\t' || c == '\f' || c == '\r' || c == '/' || c == '\'' || c == '"' || c == '`' || c == '<' || c == '>':
			return false
		case c == '@':
			return colon
		case c == ':':
			colon = true
		}
	}
	return false
}

// nameAssigned: the credential's name (the keyword and the letters, "_"
// and "-" after it), a quote or not, up to three spaces, and "=" or ":".
func nameAssigned(line []byte, off int) bool {
	i := off
	for i < len(line) && (lowerASCII(line[i]) >= 'a' && lowerASCII(line[i]) <= 'z' || line[i] == '_' || line[i] == '-') {
		i++
	}
	if i < len(line) && (line[i] == '"' || line[i] == '\'') {
		i++
	}
	for n := 0; n < 3 && i < len(line) && (line[i] == ' ' || line[i] == '\t' || line[i] == '\f' || line[i] == '\r'); n++ {
		i++
	}
	return i < len(line) && (line[i] == '=' || line[i] == ':')
}

// placeholderRE matches values that only stand in for a secret.
var placeholderRE = lazyRegexp(`(?i)^(?:x{4,}|\*{4,}|\.{3,}|<[^>]*>|\$\{?[A-Z_][A-Z0-9_]*\}?|.*(?:example|changeme|placeholder|your[_-]|redacted|dummy|sample|fake|not[_-]?a[_-]?secret).*)$`)

// lazyRegexp compiles pattern on first use. The rules' counted repetitions
// ({50,1000}, {93}) make compiling them all take 12 ms, which every kbc
// command paid at start-up, scanning or not.
func lazyRegexp(pattern string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(pattern) })
}

var allowMarkers = [][]byte{[]byte("kbq:allow-secret"), []byte("gitleaks:allow")}

// Allowed reports whether a finding of the rule named rule, of value
// secret, is allowed where it is found (kbq's configuration says so).
type Allowed func(rule string, secret []byte) bool

// Secrets reports likely secrets in src (the whole file) through report,
// with the position of each secret, but those allowed allows (nil: none).
func Secrets(src *Text, allowed Allowed, report Report) {
	var at [][]int // by rule: offsets of its keywords
	secretKeywords.each(src.Data, func(rule, off int) {
		if at == nil {
			at = make([][]int, len(secretRules))
		}
		at[rule] = append(at[rule], off)
	})
	for i, offs := range at {
		if len(offs) > 0 {
			secretRules[i].scan(src, offs, allowed, report)
		}
	}
}

// keywordIndex finds the keywords of every rule in a text in one pass over
// it, ignoring ASCII case: each keyword is filed under its first two bytes,
// in every case, and only positions whose two bytes start some keyword are
// compared. (Searching a lowercased copy of the text for each keyword in
// turn took a seventh of a build's CPU time; lowercasing each byte as it
// was read, a sixth of the scan's.)
type keywordIndex struct {
	pair   [1 << 16]uint8 // first two bytes, as written → 1 + index into groups
	groups [][]ruleKeyword
}

type ruleKeyword struct {
	text []byte // lowercase
	rule int
}

var secretKeywords = newKeywordIndex(secretRules)

func newKeywordIndex(rules []secretRule) *keywordIndex {
	ix := &keywordIndex{}
	for i, rule := range rules {
		for _, kw := range rule.keywords {
			if len(kw) < 2 || strings.ToLower(kw) != kw {
				panic("secret rules: keyword " + kw + " is not lowercase with two bytes or more")
			}
			p := uint16(kw[0])<<8 | uint16(kw[1])
			if ix.pair[p] == 0 {
				if len(ix.groups) == 255 {
					panic("secret rules: more than 255 keyword prefixes")
				}
				ix.groups = append(ix.groups, nil)
				ix.pair[p] = uint8(len(ix.groups))
			}
			g := ix.pair[p] - 1
			ix.groups[g] = append(ix.groups[g], ruleKeyword{[]byte(kw), i})
			for _, a := range bothCases(kw[0]) {
				for _, b := range bothCases(kw[1]) {
					ix.pair[uint16(a)<<8|uint16(b)] = g + 1
				}
			}
		}
	}
	return ix
}

// each calls fn with the rule and offset of every keyword in text, in
// order of offset.
func (ix *keywordIndex) each(text []byte, fn func(rule, off int)) {
	if len(text) < 2 {
		return
	}
	for i := 1; i < len(text); i++ {
		g := ix.pair[uint16(text[i-1])<<8|uint16(text[i])]
		if g == 0 {
			continue
		}
		for _, k := range ix.groups[g-1] {
			if hasPrefixFold(text[i-1:], k.text) {
				fn(k.rule, i-1)
			}
		}
	}
}

// bothCases returns c and, for a lowercase ASCII letter, its uppercase.
func bothCases(c byte) []byte {
	if 'a' <= c && c <= 'z' {
		return []byte{c, c - 'a' + 'A'}
	}
	return []byte{c}
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// hasPrefixFold reports whether text starts with the lowercase prefix,
// ignoring ASCII case.
func hasPrefixFold(text, prefix []byte) bool {
	if len(text) < len(prefix) {
		return false
	}
	for i, c := range prefix {
		if lowerASCII(text[i]) != c {
			return false
		}
	}
	return true
}

// scan runs the rule on the lines holding its keywords, at offsets offs in
// ascending order; a block rule runs on the whole text.
func (rule secretRule) scan(src *Text, offs []int, allowed Allowed, report Report) {
	text := src.Data
	if rule.block {
		for _, m := range rule.re().FindAllIndex(text, -1) {
			rule.check(src, m[0], m[1], allowed, report)
		}
		return
	}
	seen := -1 // last line scanned
	for _, off := range offs {
		line := src.LineOf(off)
		if line <= seen {
			continue
		}
		start := src.Lines[line-1]
		end := len(text)
		if line < len(src.Lines) {
			end = src.Lines[line] - 1
		}
		if rule.maybe != nil && !rule.maybe(text[start:end], off-start) {
			continue // another keyword on the line may pass
		}
		seen = line
		for _, m := range rule.re().FindAllSubmatchIndex(text[start:end], -1) {
			s, e := m[2*rule.group], m[2*rule.group+1]
			if s >= 0 {
				rule.check(src, start+s, start+e, allowed, report)
			}
		}
	}
}

// check reports the secret at text[start:end] unless it is allowed,
// a placeholder, or not random enough.
func (rule secretRule) check(src *Text, start, end int, allowed Allowed, report Report) {
	secret := src.Data[start:end]
	line := src.LineOf(start)
	lineStart := src.Lines[line-1]
	lineEnd := bytes.IndexByte(src.Data[lineStart:], '\n')
	if lineEnd < 0 {
		lineEnd = len(src.Data) - lineStart
	}
	for _, marker := range allowMarkers {
		if bytes.Contains(src.Data[lineStart:lineStart+lineEnd], marker) {
			return
		}
	}
	if !rule.block && (placeholderRE().Match(secret) || entropy(secret) < rule.entropy) {
		return
	}
	if rule.generic && !looksLiteral(secret) || rule.urlPassword && !urlPasswordLiteral(secret) || allowed != nil && allowed(rule.name, secret) {
		return
	}
	line, col := src.Position(start)
	report(line, col, Error, fmt.Sprintf("possible %s (%s): remove it and rotate it; if it is not a secret, add kbq:allow-secret to the line or allow it under secrets in "+knowledge.ConfigPath,
		rule.name, redact(secret)))
}

// looksLiteral reports whether a value assigned to a credential name looks
// like a secret written out rather than code that computes one: it mixes
// letters and digits and is not a variable reference.
func looksLiteral(v []byte) bool {
	if len(v) == 0 || v[0] == '$' || v[0] == '%' {
		return false
	}
	return bytes.ContainsAny(v, "0123456789") && bytes.ContainsFunc(v, func(r rune) bool {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z'
	})
}

// urlPasswordLiteral reports whether the password of a URL is written out
// rather than standing in for one: not a variable or a template ($PASS,
// ${PASS}, %PASS%, {{.Pass}}), not one character repeated, and not the name
// of the field itself (user:password@). A short word such as "pass" is a
// password all the same: it is what gets committed and then reused.
func urlPasswordLiteral(v []byte) bool {
	s := strings.ToLower(string(v))
	if strings.ContainsAny(s, "${}") || len(s) > 2 && s[0] == '%' && s[len(s)-1] == '%' || strings.Trim(s, s[:1]) == "" {
		return false
	}
	switch s {
	case "password", "passwd", "secret":
		return false
	}
	return true
}

// redact shows enough of a secret to find it, and no more.
func redact(secret []byte) string {
	s := strings.SplitN(string(secret), "\n", 2)[0]
	return s[:min(6, len(s)/2)] + "…"
}

// entropy is the Shannon entropy of b in bits per byte.
func entropy(b []byte) float64 {
	var counts [256]int
	for _, c := range b {
		counts[c]++
	}
	var h float64
	n := float64(len(b))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// SecretRules lists the secret guard's rules, lowercase.
func SecretRules() []string {
	names := make([]string, len(secretRules))
	for i, r := range secretRules {
		names[i] = strings.ToLower(r.name)
	}
	return names
}
