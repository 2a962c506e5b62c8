package kbqserve

import (
	"strings"
	"testing"

	"github.com/kbqdev/kbq/knowledge"
)

// The tools' schemas name what the knowledge registry defines: every
// indexed kind, and the filters of its Meta keys.
func TestSchemasComeFromTheRegistry(t *testing.T) {
	search, list := inputSchema[searchArgs](), inputSchema[listArgs]()
	for _, kind := range knowledge.IndexedKinds() {
		for name, desc := range map[string]string{"search": search.Properties["kind"].Description, "list": list.Properties["kind"].Description} {
			if !strings.Contains(desc, kind) {
				t.Errorf("%s: kind's description %q does not name %s", name, desc, kind)
			}
		}
	}
	for _, k := range knowledge.MetaKeys() {
		if k.Filter && !strings.Contains(search.Properties["query"].Description, k.Name+":VALUE") {
			t.Errorf("the query's description does not name the %s: filter", k.Name)
		}
	}
}
