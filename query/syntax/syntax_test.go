package syntax_test

import (
	"strings"
	"testing"

	"github.com/kbqdev/kbq/query/syntax"
)

// render writes a parsed query back in a canonical form: + required,
// - excluded, "phrase", pre*, ~wild, field:value, (a | b) for OR groups.
func render(cs []syntax.Clause) string {
	var parts []string
	for _, c := range cs {
		var b strings.Builder
		switch c.Occur {
		case syntax.Must:
			b.WriteByte('+')
		case syntax.MustNot:
			b.WriteByte('-')
		}
		if c.Field != "" {
			b.WriteString(c.Field + ":")
		}
		switch c.Kind {
		case syntax.Phrase:
			b.WriteString(`"` + c.Text + `"`)
		case syntax.Prefix:
			b.WriteString(c.Text + "*")
		case syntax.Wildcard:
			b.WriteString("~" + c.Text)
		case syntax.All:
			b.WriteString("ALL")
		case syntax.Any:
			var sub []string
			for _, s := range c.Sub {
				sub = append(sub, render([]syntax.Clause{s}))
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
		if got := render(syntax.Parse(tc.q).Clauses); got != tc.want {
			t.Errorf("Parse(%q) = %s, want %s", tc.q, got, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, seed := range []string{`a "b c" -d +e f* g?h tag:x kind:memory OR title:"y z"`, `"`, `-`, `AND OR NOT`, `tag:`, `x:y:z`} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, q string) {
		p := syntax.Parse(q)
		for _, c := range p.Clauses {
			if c.Kind == syntax.Any && len(c.Sub) < 2 {
				t.Fatalf("OR group with %d members from %q", len(c.Sub), q)
			}
		}
	})
}
