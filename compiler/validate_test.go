package compiler

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/knowledge"
)

func TestReadMeta(t *testing.T) {
	tests := []struct {
		name, kind, yaml string
		want             string // the diagnostics, "line:col message" joined by "; "
		check            func(t *testing.T, m meta)
	}{
		{name: "memory ok", kind: knowledge.KindMemory,
			yaml: "id: 3\ncreated: 2024-05-01T10:00:00+02:00\ntags: [a, b]\nsource: extracted\nimportance: 0.8\n",
			check: func(t *testing.T, m meta) {
				if m.id != 3 || fmt.Sprint(m.tags) != "[a b]" || m.source != "extracted" || m.importance != 0.8 || !m.hasImportance {
					t.Errorf("meta = %+v", m)
				}
			}},
		{name: "tags as comma string", kind: knowledge.KindTopic, yaml: "tags: deploy, ops ,\n",
			check: func(t *testing.T, m meta) {
				if fmt.Sprint(m.tags) != "[deploy ops]" {
					t.Errorf("tags = %q", m.tags)
				}
			}},
		{name: "numeric tags are text", kind: knowledge.KindTopic, yaml: "tags: [2024, q3]\n",
			check: func(t *testing.T, m meta) {
				if fmt.Sprint(m.tags) != "[2024 q3]" {
					t.Errorf("tags = %q", m.tags)
				}
			}},
		{name: "nested tags", kind: knowledge.KindTopic, yaml: "tags: [a, [b]]\n",
			want: "2:11 tags: every tag must be text, not a list"},
		{name: "tags mapping", kind: knowledge.KindTopic, yaml: "tags: {a: 1}\n",
			want: "2:7 tags: must be a list of strings or a comma-separated string, not a mapping"},
		{name: "importance out of range", kind: knowledge.KindTopic, yaml: "importance: 1.5\n",
			want: "2:13 importance: must be a number from 0 to 1, not 1.5"},
		{name: "importance text", kind: knowledge.KindTopic, yaml: "importance: high\n",
			want: `2:13 importance: must be a number from 0 to 1, not the string "high"`},
		{name: "duplicate key", kind: knowledge.KindTopic, yaml: "title: a\ntitle: b\n",
			want: `3:1 duplicate key "title" (first set on line 2)`},
		{name: "title list", kind: knowledge.KindTopic, yaml: "title: [a]\n",
			want: "2:8 title: must be text, not a list"},
		{name: "unknown keys allowed", kind: knowledge.KindTopic, yaml: "owner: ada\nnested: {a: [1]}\n"},
		{name: "memory missing all", kind: knowledge.KindMemory, yaml: "tags: [x]\n",
			want: "2:1 missing required fields created, id: memories need id and created"},
		{name: "memory id zero", kind: knowledge.KindMemory, yaml: "id: 0\ncreated: 2024-05-01T10:00:00Z\n",
			want: "2:5 id: must be ≥ 1, not 0"},
		{name: "memory id float", kind: knowledge.KindMemory, yaml: "id: 1.5\ncreated: 2024-05-01T10:00:00Z\n",
			want: "2:5 id: must be an integer ≥ 1, not a number"},
		{name: "created without zone", kind: knowledge.KindMemory, yaml: "id: 1\ncreated: 2024-05-01T10:00:00\n",
			want: `3:10 created: "2024-05-01T10:00:00" is not an RFC 3339 timestamp; it needs a time and a zone: write it like 2024-05-01T10:00:00Z or 2024-05-01T12:00:00+02:00`},
		{name: "alias resolved", kind: knowledge.KindMemory, yaml: "x: &when 2024-05-01T10:00:00Z\nid: 1\ncreated: *when\n"},
		{name: "article ok", kind: knowledge.KindArticle,
			yaml: "source: https://example.com/a?b=c\nfetched: 2024-05-01 10:00\nattachment: ./attachments/a.pdf\n",
			check: func(t *testing.T, m meta) {
				if m.attachment != "attachments/a.pdf" || m.source != "https://example.com/a?b=c" {
					t.Errorf("meta = %+v", m)
				}
			}},
		{name: "article relative source", kind: knowledge.KindArticle, yaml: "source: /a/b\nfetched: 2024-05-01\n",
			want: `2:9 source: "/a/b" is not an absolute URL (write https://host/path)`},
		{name: "attachment escapes", kind: knowledge.KindArticle, yaml: "source: https://e.com\nfetched: 2024-05-01\nattachment: ../../etc/passwd\n",
			want: `4:13 attachment: "../../etc/passwd" is not a path under attachments/`},
		{name: "context needs both", kind: knowledge.KindContext, yaml: "version: 2\n",
			want: "2:1 missing required field updated: context frontmatter, when present, needs version and updated"},
		{name: "context version string", kind: knowledge.KindContext, yaml: "version: \"2\"\nupdated: 2024-05-01\n",
			want: `2:10 version: must be an integer ≥ 1, not the string "2"`},
		{name: "null value", kind: knowledge.KindMemory, yaml: "id:\ncreated: 2024-05-01T10:00:00Z\n",
			want: "2:4 id: must be an integer ≥ 1, not null"},
		{name: "non-scalar key", kind: knowledge.KindTopic, yaml: "? [a, b]\n: c\n",
			want: "2:3 frontmatter keys must be plain names, not a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fm, _, probs := split(t, "---\n"+tt.yaml+"---\nbody\n", false)
			if len(probs) > 0 {
				t.Fatalf("frontmatter problems: %v", probs)
			}
			var got []string
			m := readMeta(tt.kind, fm, func(line, col int, _ Severity, msg string) {
				got = append(got, fmt.Sprintf("%d:%d %s", line, col, msg))
			}, nil)
			if strings.Join(got, "; ") != tt.want {
				t.Errorf("diagnostics:\n got %q\nwant %q", strings.Join(got, "; "), tt.want)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

// TestEveryKeyIsChecked: every frontmatter key a kind knows has a
// validator, and every validator belongs to a key of the registry.
func TestEveryKeyIsChecked(t *testing.T) {
	for _, kind := range knowledge.Kinds() {
		for _, key := range append(slices.Clone(kind.Required), kind.Optional...) {
			if _, ok := knowledge.LookupKey(key); !ok {
				t.Errorf("kind %s names key %s, which the registry does not define", kind.Name, key)
			}
			if keyCheck(kind, key) == nil {
				t.Errorf("kind %s: key %s has no validator", kind.Name, key)
			}
		}
	}
	for key := range keyChecks {
		if k, ok := knowledge.LookupKey(key); !ok || k.Meta {
			t.Errorf("validator for %s, which is not a registry key with code of its own", key)
		}
	}
	for _, k := range knowledge.MetaKeys() {
		if k.Type != knowledge.Text {
			t.Errorf("Meta key %s is not Text: a Meta key is stored as written", k.Name)
		}
	}
}

// TestMetaKeys: a Meta key's value is kept as written, trimmed; anything
// but one line of text is an error.
func TestMetaKeys(t *testing.T) {
	var diags []string
	r := func(line, col int, _ Severity, msg string) {
		diags = append(diags, fmt.Sprintf("%d:%d %s", line, col, msg))
	}
	m := readMeta(knowledge.KindTopic, parseFM(t, "owner: ' Platform team '\n"), r, nil)
	if len(diags) > 0 || m.extra["owner"] != "Platform team" {
		t.Fatalf("owner = %q, diagnostics %v", m.extra["owner"], diags)
	}
	for _, bad := range []string{"owner: [a, b]\n", "owner:\n", "owner: \"a\\nb\"\n", "owner: " + strings.Repeat("x", knowledge.MaxMetaValue+1) + "\n"} {
		diags = nil
		m := readMeta(knowledge.KindMemory, parseFM(t, "id: 1\ncreated: 2024-05-01T10:00:00Z\n"+bad), r, nil)
		if len(diags) != 1 || !strings.Contains(diags[0], "owner: ") || m.extra != nil {
			t.Errorf("%q: diagnostics %v, extra %v", bad, diags, m.extra)
		}
	}
}

func parseFM(t *testing.T, yaml string) frontmatter {
	t.Helper()
	fm, _, probs := split(t, "---\n"+yaml+"---\nbody\n", false)
	if len(probs) > 0 {
		t.Fatalf("frontmatter problems: %v", probs)
	}
	return fm
}
