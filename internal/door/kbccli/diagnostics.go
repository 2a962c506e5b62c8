package kbccli

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kbqdev/kbq/compiler"
)

// diagnosticFormats are the formats of writeDiagnostics.
var diagnosticFormats = []string{"text", "github", "json"}

// writeDiagnostics writes ds in format: "text" (path:line:col: severity:
// message), "github" (GitHub Actions workflow commands, which annotate the
// lines of a pull request) or "json" (an array).
func writeDiagnostics(w io.Writer, format string, ds compiler.Diagnostics) error {
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
			ds = compiler.Diagnostics{}
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(ds)
	}
	return fmt.Errorf("unknown format %q (want one of %s)", format, strings.Join(diagnosticFormats, ", "))
}

// githubAnnotation renders d as a workflow command:
// ::error file=F,line=L,col=C,title=T::MESSAGE
func githubAnnotation(d compiler.Diagnostic) string {
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
