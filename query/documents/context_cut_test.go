package documents

import (
	"fmt"
	"strings"
	"testing"
)

func TestStripComments(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"# P\n\n<!-- a note\nover lines -->\n\n- one\n- two", "# P\n\n- one\n- two"},
		{"text <!-- inline --> more", "text  more"},
		{"```\n<!-- kept in code -->\n```\nafter", "```\n<!-- kept in code -->\n```\nafter"},
		{"no comments here", "no comments here"},
		{"a\n<!-- unclosed\nb", "a"},
	} {
		if got := stripComments(tc.in); got != tc.want {
			t.Errorf("stripComments(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The context is cut before a block, never inside a line, a fenced block
// or after a heading left alone, and says what it left out.
func TestCutContext(t *testing.T) {
	var b strings.Builder
	b.WriteString("## Internal Knowledge\n\n### Project Context\n\n")
	for i := range 40 {
		fmt.Fprintf(&b, "#### Rule %d\n\nA paragraph about rule %d that goes on for a while.\n\n- one\n- two\n\n```\ncode line %d\n\ncode after a blank\n```\n\n", i, i, i)
	}
	text := b.String()
	for _, limit := range []struct{ bytes, lines int }{{2000, 0}, {len(text) * 2 / 3, 0}, {100000, 60}, {700, 0}} {
		out, dropped := cutContext(text, []span{{start: 0, paths: []string{".kb/context.md"}}}, limit.bytes, limit.lines)
		if len(out) > limit.bytes || limit.lines > 0 && strings.Count(out, "\n") > limit.lines {
			t.Errorf("%+v: %d bytes, %d lines", limit, len(out), strings.Count(out, "\n"))
		}
		if !strings.HasSuffix(out, "read it with `kbq get .kb/context.md`)*\n") || len(dropped) != 1 {
			t.Errorf("%+v: no note, or dropped %v:\n%s", limit, dropped, out[max(0, len(out)-200):])
		}
		body := strings.TrimSuffix(out, "\n")
		body = body[:strings.LastIndex(body, "\n")]
		if strings.Count(body, "```")%2 != 0 {
			t.Errorf("%+v: cut inside fenced code:\n%s", limit, body[max(0, len(body)-200):])
		}
		lines := strings.Split(strings.TrimRight(body, "\n"), "\n")
		if last := lines[len(lines)-1]; strings.HasPrefix(last, "#") {
			t.Errorf("%+v: ends with the heading %q", limit, last)
		}
	}
	if out, dropped := cutContext(text, []span{{start: 0, paths: []string{".kb/context.md"}}}, len(text), 0); out != text || dropped != nil {
		t.Error("a context that fits was changed")
	}
}

// A first block over the whole budget (a context of one long paragraph)
// is cut at the end of a sentence, not dropped whole.
func TestCutContextInsideALongBlock(t *testing.T) {
	text := "## Internal Knowledge\n\n### Project Context\n\n" + strings.Repeat("Every service logs to stdout in JSON. ", 2000) + "\n"
	out, dropped := cutContext(text, []span{{start: 0, paths: []string{".kb/context.md"}}}, 20<<10, 0)
	if len(out) > 20<<10 || len(out) < 10<<10 {
		t.Fatalf("%d bytes of a 20 KiB budget kept", len(out))
	}
	body := out[:strings.Index(out, "*(kbq:")]
	if !strings.HasSuffix(strings.TrimSpace(body), "in JSON.") || len(dropped) != 1 {
		t.Errorf("not cut after a sentence, or dropped %v: %q", dropped, body[max(0, len(body)-80):])
	}
}
