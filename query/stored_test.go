package query

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/kbqdev/kbq/artifact"
)

func TestStoredFieldsThatDoNotParseAreCorruption(t *testing.T) {
	for _, tc := range []struct {
		field string
		value string
		parse func(string, []byte) error
	}{
		{"lines", "3-x", func(f string, v []byte) error { _, _, err := parseRange(f, v); return err }},
		{"lines", "9-3", func(f string, v []byte) error { _, _, err := parseRange(f, v); return err }},
		{"span", "", func(f string, v []byte) error { _, _, err := parseRange(f, v); return err }},
		{"chunk", "two", func(f string, v []byte) error { _, err := parseStored(f, v, strconv.Atoi); return err }},
	} {
		if err := tc.parse(tc.field, []byte(tc.value)); !errors.Is(err, artifact.ErrCorrupt) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s %q: %v, want a corrupt artifact naming the field", tc.field, tc.value, err)
		}
	}
	if a, b, err := parseRange("lines", []byte("3-7")); a != 3 || b != 7 || err != nil {
		t.Errorf("3-7: %d %d %v", a, b, err)
	}
}
