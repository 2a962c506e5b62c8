package compiler

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/artifact"
)

func TestReadMeta(t *testing.T) {
	tests := []struct {
		name, kind, yaml string
		want             string // the diagnostics, "line:col message" joined by "; "
		check            func(t *testing.T, m meta)
	}{
		{name: "memory ok", kind: artifact.KindMemory,
			yaml: "id: 3\ncreated: 2024-05-01T10:00:00+02:00\ntags: [a, b]\nsource: extracted\nimportance: 0.8\n",
			check: func(t *testing.T, m meta) {
				if m.id != 3 || fmt.Sprint(m.tags) != "[a b]" || m.source != "extracted" || m.importance != 0.8 || !m.hasImportance {
					t.Errorf("meta = %+v", m)
				}
			}},
		{name: "tags as comma string", kind: artifact.KindTopic, yaml: "tags: deploy, ops ,\n",
			check: func(t *testing.T, m meta) {
				if fmt.Sprint(m.tags) != "[deploy ops]" {
					t.Errorf("tags = %q", m.tags)
				}
			}},
		{name: "numeric tags are text", kind: artifact.KindTopic, yaml: "tags: [2024, q3]\n",
			check: func(t *testing.T, m meta) {
				if fmt.Sprint(m.tags) != "[2024 q3]" {
					t.Errorf("tags = %q", m.tags)
				}
			}},
		{name: "nested tags", kind: artifact.KindTopic, yaml: "tags: [a, [b]]\n",
			want: "2:11 tags: every tag must be text, not a list"},
		{name: "tags mapping", kind: artifact.KindTopic, yaml: "tags: {a: 1}\n",
			want: "2:7 tags: must be a list of strings or a comma-separated string, not a mapping"},
		{name: "importance out of range", kind: artifact.KindTopic, yaml: "importance: 1.5\n",
			want: "2:13 importance: must be a number from 0 to 1, not 1.5"},
		{name: "importance text", kind: artifact.KindTopic, yaml: "importance: high\n",
			want: `2:13 importance: must be a number from 0 to 1, not the string "high"`},
		{name: "duplicate key", kind: artifact.KindTopic, yaml: "title: a\ntitle: b\n",
			want: `3:1 duplicate key "title" (first set on line 2)`},
		{name: "title list", kind: artifact.KindTopic, yaml: "title: [a]\n",
			want: "2:8 title: must be text, not a list"},
		{name: "unknown keys allowed", kind: artifact.KindTopic, yaml: "owner: ada\nnested: {a: [1]}\n"},
		{name: "memory missing all", kind: artifact.KindMemory, yaml: "tags: [x]\n",
			want: "2:1 missing required fields created, id: memories need id and created"},
		{name: "memory id zero", kind: artifact.KindMemory, yaml: "id: 0\ncreated: 2024-05-01T10:00:00Z\n",
			want: "2:5 id: must be ≥ 1, not 0"},
		{name: "memory id float", kind: artifact.KindMemory, yaml: "id: 1.5\ncreated: 2024-05-01T10:00:00Z\n",
			want: "2:5 id: must be an integer ≥ 1, not a number"},
		{name: "created without zone", kind: artifact.KindMemory, yaml: "id: 1\ncreated: 2024-05-01T10:00:00\n",
			want: `3:10 created: "2024-05-01T10:00:00" is not an RFC 3339 timestamp; it needs a time and a zone: write it like 2024-05-01T10:00:00Z or 2024-05-01T12:00:00+02:00`},
		{name: "alias resolved", kind: artifact.KindMemory, yaml: "x: &when 2024-05-01T10:00:00Z\nid: 1\ncreated: *when\n"},
		{name: "article ok", kind: artifact.KindArticle,
			yaml: "source: https://example.com/a?b=c\nfetched: 2024-05-01 10:00\nattachment: ./attachments/a.pdf\n",
			check: func(t *testing.T, m meta) {
				if m.attachment != "attachments/a.pdf" || m.source != "https://example.com/a?b=c" {
					t.Errorf("meta = %+v", m)
				}
			}},
		{name: "article relative source", kind: artifact.KindArticle, yaml: "source: /a/b\nfetched: 2024-05-01\n",
			want: `2:9 source: "/a/b" is not an absolute URL (write https://host/path)`},
		{name: "attachment escapes", kind: artifact.KindArticle, yaml: "source: https://e.com\nfetched: 2024-05-01\nattachment: ../../etc/passwd\n",
			want: `4:13 attachment: "../../etc/passwd" is not a path under attachments/`},
		{name: "context needs both", kind: artifact.KindContext, yaml: "version: 2\n",
			want: "2:1 missing required field updated: context frontmatter, when present, needs version and updated"},
		{name: "context version string", kind: artifact.KindContext, yaml: "version: \"2\"\nupdated: 2024-05-01\n",
			want: `2:10 version: must be an integer ≥ 1, not the string "2"`},
		{name: "null value", kind: artifact.KindMemory, yaml: "id:\ncreated: 2024-05-01T10:00:00Z\n",
			want: "2:4 id: must be an integer ≥ 1, not null"},
		{name: "non-scalar key", kind: artifact.KindTopic, yaml: "? [a, b]\n: c\n",
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
			})
			if strings.Join(got, "; ") != tt.want {
				t.Errorf("diagnostics:\n got %q\nwant %q", strings.Join(got, "; "), tt.want)
			}
			if tt.check != nil {
				tt.check(t, m)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		path               string
		ok                 bool
		scope, kind, topic string
		warning            bool
	}{
		{path: ".kb/context.md", ok: true, scope: "project", kind: "context", topic: "context"},
		{path: ".kb/deploy/steps.md", ok: true, scope: "project", kind: "topic", topic: "deploy/steps"},
		{path: ".kb/memories/001-x.md", ok: true, scope: "project", kind: "memory", topic: "memories/001-x"},
		{path: ".kb/articles/a.MD", ok: true, scope: "project", kind: "article", topic: "articles/a"},
		{path: ".kb/attachments/a.pdf", ok: true, scope: "project", kind: "attachment", topic: "attachments/a.pdf"},
		{path: ".kb/memories/old/001-x.md", ok: true, scope: "project", kind: "topic", topic: "memories/old/001-x", warning: true},
		{path: ".kb/memory/x.md", ok: true, scope: "project", kind: "topic", topic: "memory/x", warning: true},
		{path: "services/api/.kb/context.md", ok: true, scope: "services/api", kind: "context", topic: "context"},
		{path: "global/.kb/x.md", ok: true, scope: "./global", kind: "topic", topic: "x"},
		{path: "AGENTS.md", ok: true, scope: "project", kind: "context", topic: "AGENTS"},
		{path: "services/api/CLAUDE.md", ok: true, scope: "services/api", kind: "context", topic: "CLAUDE"},
		{path: ".kb/evals.yaml"},
		{path: "README.md"},
		{path: "docs/.kbx/a.md"},
		{path: "agents.md"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			loc, ok := classify(tt.path, DefaultContextFiles)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if loc.scope != tt.scope || loc.kind != tt.kind || loc.topic != tt.topic || (loc.warning != "") != tt.warning {
				t.Errorf("got %+v, want scope %s kind %s topic %s warning %v", loc, tt.scope, tt.kind, tt.topic, tt.warning)
			}
		})
	}
}
