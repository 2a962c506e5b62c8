package compiler

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode"
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

// quotePath quotes a path holding control characters, as git does, so that
// a diagnostic stays on one line for editors and scripts that read it.
func quotePath(p string) string {
	if strings.ContainsFunc(p, unicode.IsControl) {
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

// Formats of WriteDiagnostics.
var Formats = []string{"text", "github", "json"}

// WriteDiagnostics writes ds in format: "text" (path:line:col: severity:
// message), "github" (GitHub Actions workflow commands, which annotate the
// lines of a pull request) or "json" (an array).
func WriteDiagnostics(w io.Writer, format string, ds Diagnostics) error {
	switch format {
	case "text":
		for _, d := range ds {
			if _, err := fmt.Fprintln(w, d); err != nil {
				return err
			}
		}
		return nil
	case "github":
		for _, d := range ds {
			if _, err := fmt.Fprintln(w, githubAnnotation(d)); err != nil {
				return err
			}
		}
		return nil
	case "json":
		if ds == nil {
			ds = Diagnostics{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ds)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(Formats, ", "))
}

// githubAnnotation renders d as a workflow command:
// ::error file=F,line=L,col=C,title=T::MESSAGE
func githubAnnotation(d Diagnostic) string {
	return fmt.Sprintf("::%s file=%s,line=%d,col=%d,title=%s::%s", d.Severity,
		escapeProperty(d.Path), d.Line, d.Col, escapeProperty("kbc "+d.Severity.String()), escapeData(d.Message))
}

// escapeData and escapeProperty follow @actions/core's command encoding.
func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}
