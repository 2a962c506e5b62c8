package query_test

import (
	"strings"
	"testing"

	"github.com/kbqdev/kbq/query"
)

// render writes a parsed query back in a canonical form: + required,
// - excluded, "phrase", pre*, ~wild, field:value, (a | b) for OR groups.
func render(cs []query.Clause) string {
	var parts []string
	for _, c := range cs {
		var b strings.Builder
		switch c.Occur {
		case query.Must:
			b.WriteByte('+')
		case query.MustNot:
			b.WriteByte('-')
		}
		if c.Field != "" {
			b.WriteString(c.Field + ":")
		}
		switch c.Kind {
		case query.Phrase:
			b.WriteString(`"` + c.Text + `"`)
		case query.Prefix:
			b.WriteString(c.Text + "*")
		case query.Wildcard:
			b.WriteString("~" + c.Text)
		case query.All:
			b.WriteString("ALL")
		case query.Any:
			var sub []string
			for _, s := range c.Sub {
				sub = append(sub, render([]query.Clause{s}))
			}
			b.WriteString("(" + strings.Join(sub, " | ") + ")")
		default:
			b.WriteString(c.Text)
		}
		parts = append(parts, b.String())
	}
	return strings.Join(parts, " ")
}

func TestParse(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{`retry backoff`, `retry backoff`},
		{`+retry -flaky`, `+retry -flaky`},
		{`a AND b`, `+a +b`},
		{`a OR b`, `(a | b)`},
		{`NOT flaky deploy`, `-flaky deploy`},
		{`"exact phrase" +"required one" -"not this"`, `"exact phrase" +"required one" -"not this"`},
		{`deploy* te?t`, `deploy* ~te?t`},
		{`tag:ops kind:memory -tag:old title:rollback`, `+tag:ops +kind:memory -tag:old +title:rollback`},
		{`-kind:memory`, `-kind:memory`},
		{`+Über -élan`, `+Über -élan`},
		// Prose is not syntax.
		{`rose by +1 SD`, `rose by +1 SD`},
		{`IL-2 and -3 receptors`, `IL-2 and -3 receptors`},
		{`Differentiated E2f-1, -2, -3 TKO cells`, `Differentiated E2f-1, -2, -3 TKO cells`},
		{`the +5 position`, `the +5 position`},
		{`a -0.5 change`, `a -0.5 change`},
		{`C++ and c#`, `C++ and c#`},
		{`- + -- ++`, `- + -- ++`},
		{`how are results ranked?`, `how are results ranked`},
		{`why?? what ?`, `why what`},
		{`title:ranked?`, `+title:ranked`},
	} {
		if got := render(query.Parse(tc.q).Clauses); got != tc.want {
			t.Errorf("Parse(%q) = %s, want %s", tc.q, got, tc.want)
		}
	}
}
