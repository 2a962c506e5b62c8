package render

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/kbqdev/kbq/internal/visible"
	"github.com/kbqdev/kbq/knowledge"
)

// JSON writes v as indented JSON, leaving <, > and & as they are.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// MetaText shows a document's Meta keys: "owner: platform", one after
// another in the registry's order, joined by " · ".
func MetaText(meta map[string]string) string {
	var parts []string
	for _, k := range knowledge.MetaKeys() {
		if v, ok := meta[k.Name]; ok {
			parts = append(parts, k.Name+": "+v)
		}
	}
	return strings.Join(parts, " · ")
}

// MetaColumns are the columns of the registry's Meta keys that any of
// metas sets, for tables: their names, and each row's values ("-" for
// none).
func MetaColumns(metas []map[string]string) (names []string, cells [][]string) {
	cells = make([][]string, len(metas))
	for _, k := range knowledge.MetaKeys() {
		set := false
		for _, m := range metas {
			_, ok := m[k.Name]
			set = set || ok
		}
		if !set {
			continue
		}
		names = append(names, k.Name)
		for i, m := range metas {
			cells[i] = append(cells[i], cmp.Or(m[k.Name], "-"))
		}
	}
	return names, cells
}

// JSONLines writes each item as a line of JSON.
func JSONLines[T any](w io.Writer, items []T) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return nil
}

// Paths writes each path once, in the order given, a line each
// whatever the path holds.
func Paths(w io.Writer, paths []string) error {
	seen := map[string]bool{}
	for _, p := range paths {
		if !seen[p] {
			seen[p] = true
			if _, err := fmt.Fprintln(w, visible.Line(p)); err != nil {
				return err
			}
		}
	}
	return nil
}

// metaHeader names a CSV column for each of the registry's Meta keys.
func metaHeader() []string {
	var names []string
	for _, k := range knowledge.MetaKeys() {
		names = append(names, k.Name)
	}
	return names
}

// metaCells are a row's cells under metaHeader.
func metaCells(meta map[string]string) []string {
	var cells []string
	for _, k := range knowledge.MetaKeys() {
		cells = append(cells, meta[k.Name])
	}
	return cells
}

// visibleCells are the cells of a CSV row with their control characters
// escaped (one line each: a CSV row is a line on a terminal too).
func visibleCells(cells ...string) []string {
	for i, c := range cells {
		cells[i] = visible.Line(c)
	}
	return cells
}
