package knowledge

import "testing"

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
			loc, ok := Classify(tt.path, DefaultContextFiles)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if loc.Scope != tt.scope || loc.Kind != tt.kind || loc.Topic != tt.topic || (loc.Warning != "") != tt.warning {
				t.Errorf("got %+v, want scope %s kind %s topic %s warning %v", loc, tt.scope, tt.kind, tt.topic, tt.warning)
			}
		})
	}
}
