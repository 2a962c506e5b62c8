package checks

import (
	"testing"

	"github.com/kbqdev/kbq/knowledge"
)

// The facts the checks between documents look at are kept; a plain
// topic's are not.
func TestFactsChecked(t *testing.T) {
	for _, c := range []struct {
		f    Facts
		want bool
	}{
		{Facts{Kind: knowledge.KindTopic}, false},
		{Facts{Kind: knowledge.KindArticle}, false},
		{Facts{Kind: knowledge.KindMemory}, true},
		{Facts{Kind: knowledge.KindContext}, true},
		{Facts{Kind: knowledge.KindArticle, Attachment: "spec.pdf"}, true},
		{Facts{Kind: knowledge.KindTopic, Supersedes: []Ref{{}}}, true},
		{Facts{Kind: knowledge.KindTopic, Contradicts: []Ref{{}}}, true},
		{Facts{Kind: knowledge.KindTopic, Status: "deprecated"}, true},
	} {
		if got := c.f.Checked(); got != c.want {
			t.Errorf("%+v: checked %v, want %v", c.f, got, c.want)
		}
	}
}
