package checks

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Severity ranks a diagnostic.
type Severity int

const (
	Error Severity = iota
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// MarshalText makes severities "error" and "warning" in JSON.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Diagnostic is one problem found in a knowledge file.
type Diagnostic struct {
	Path     string   `json:"path"` // relative to the repository root
	Line     int      `json:"line"` // 1-based
	Col      int      `json:"col"`  // 1-based, in characters
	Severity Severity `json:"severity"`
	Message  string   `json:"message"`
}

func (d Diagnostic) String() string {
	return fmt.Sprintf("%s:%d:%d: %s: %s", quotePath(d.Path), d.Line, d.Col, d.Severity, d.Message)
}

// quotePath quotes a path holding control characters or bytes that are
// not UTF-8, as git does, so that a diagnostic stays on one line for
// editors and scripts that read it and shows the bytes the name holds.
func quotePath(p string) string {
	if strings.ContainsFunc(p, unicode.IsControl) || !utf8.ValidString(p) {
		return strconv.Quote(p)
	}
	return p
}

// Diagnostics is a list of diagnostics.
type Diagnostics []Diagnostic

// Errors counts the errors.
func (ds Diagnostics) Errors() int {
	n := 0
	for _, d := range ds {
		if d.Severity == Error {
			n++
		}
	}
	return n
}

// Sort orders diagnostics by path, position and message.
func (ds Diagnostics) Sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(cmp.Compare(a.Path, b.Path), cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col), cmp.Compare(a.Severity, b.Severity), cmp.Compare(a.Message, b.Message))
	})
}

// A Report is told each problem a check finds in one file, at a 1-based
// line and column.
type Report func(line, col int, sev Severity, msg string)
