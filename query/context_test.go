package query_test

import (
	"testing"

	"github.com/kbqdev/kbq/query"
)

func TestStripComments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# P\n\n<!-- a note\nover lines -->\n\n- one\n- two", "# P\n\n- one\n- two"},
		{"text <!-- inline --> more", "text  more"},
		{"```\n<!-- kept in code -->\n```\nafter", "```\n<!-- kept in code -->\n```\nafter"},
		{"no comments here", "no comments here"},
		{"a\n<!-- unclosed\nb", "a"},
	} {
		if got := query.StripComments(tc.in); got != tc.want {
			t.Errorf("stripComments(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
