//go:build linux

package main

import (
	"fmt"
	"math/rand/v2"
	"strings"
)

// hostile is a query designed to cost as much as the query language
// allows, within the 4 KiB the servers accept.
type hostile struct {
	name, q string
}

const maxQueryBytes = 4096

// fill repeats parts, separated by spaces, up to the servers' limit.
func fill(next func(i int) string) string {
	var b strings.Builder
	for i := 0; ; i++ {
		p := next(i)
		if b.Len()+len(p)+1 > maxQueryBytes {
			return b.String()
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
}

func letters(r *rand.Rand, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return string(b)
}

func hostileQueries() []hostile {
	r := rand.New(rand.NewPCG(1, 2))
	two := func(i int) string { return string([]byte{byte('a' + i/26%26), byte('a' + i%26)}) }
	return []hostile{
		{"a* x500", fill(func(int) string { return "a*" })},
		{"distinct 2-letter prefixes", fill(func(i int) string { return two(i) + "*" })},
		{"distinct 1-letter prefixes, OR", fill(func(i int) string {
			if i%2 == 1 {
				return "OR"
			}
			return string(rune('a'+i/2%26)) + "*"
		})},
		{"leading wildcards *x*", fill(func(i int) string { return "*" + two(i) + "*" })},
		{"wildcards ?*?", fill(func(i int) string { return "?" + string(rune('a'+i%26)) + "*?" })},
		{"title: wildcards", fill(func(i int) string { return "title:*" + two(i) })},
		{"path: prefixes", fill(func(i int) string { return "path:" + two(i) })},
		{"topic: prefixes", fill(func(i int) string { return "topic:" + two(i) })},
		{"distinct tags", fill(func(i int) string { return "tag:" + letters(r, 4) })},
		{"distinct words", fill(func(i int) string { return letters(r, 3+i%5) })},
		{"common words", fill(func(i int) string {
			return []string{"the", "get", "object", "command", "parameter", "value", "string", "type", "name", "powershell"}[i%10]
		})},
		{"required common words", fill(func(i int) string {
			return "+" + []string{"get", "object", "command", "parameter", "value", "string", "type", "name"}[i%8] + fmt.Sprint(i%3)
		})},
		{"exclusions", "get " + fill(func(i int) string { return "-" + letters(r, 2) })[:maxQueryBytes-10]},
		{"NOT prefixes", "get " + fill(func(i int) string { return "NOT " + two(i) + "*" })[:maxQueryBytes-10]},
		{"phrases of common words", fill(func(i int) string { return `"the value of the parameter"` })},
		{"required phrases", fill(func(i int) string { return `+"get ` + []string{"object", "command", "item", "content"}[i%4] + `"` })},
		{"one long phrase", `"` + fill(func(i int) string {
			return []string{"the", "value", "of", "a", "parameter", "is", "string"}[i%7]
		})[:maxQueryBytes-10] + `"`},
		{"excluded phrases", "get " + fill(func(i int) string { return `-"the ` + letters(r, 3) + `"` })[:maxQueryBytes-20]},
		{"only exclusions (refused)", fill(func(i int) string { return "-" + letters(r, 3) })},
		{"OR chain", fill(func(i int) string {
			if i%2 == 1 {
				return "OR"
			}
			return []string{"get", "set", "new", "remove", "object", "item"}[i/2%6]
		})},
		{"AND chain", fill(func(i int) string {
			if i%2 == 1 {
				return "AND"
			}
			return []string{"get", "set", "new", "remove", "object", "item"}[i/2%6]
		})},
		{"lone stars", fill(func(int) string { return "*" })},
		{"one huge word", strings.Repeat("x", maxQueryBytes)},
		{"unbalanced quote", `"` + fill(func(i int) string { return letters(r, 5) })[:maxQueryBytes-10]},
	}
}
