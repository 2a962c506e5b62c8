package knowledge

import (
	"strings"
)

// KindsHelp documents every kind and every frontmatter key, for help
// text: a KINDS and a FRONTMATTER section, indented by three spaces.
func KindsHelp() string {
	var b strings.Builder
	b.WriteString("KINDS (where a file is decides its kind):\n")
	for _, k := range kinds {
		b.WriteString("   " + pad(k.Name, 11) + k.Description + "\n")
		b.WriteString("   " + pad("", 11) + k.Place + "\n")
		switch {
		case len(k.Required) > 0 && k.FrontmatterOptional:
			b.WriteString("   " + pad("", 11) + "needs " + strings.Join(k.Required, ", ") + " when it has frontmatter\n")
		case len(k.Required) > 0:
			b.WriteString("   " + pad("", 11) + "needs " + strings.Join(k.Required, ", ") + "\n")
		}
		b.WriteString("   " + pad("", 11) + "named by " + k.ID + "\n")
		b.WriteString("   " + pad("", 11) + "retired: " + k.Expiry + "\n")
	}
	b.WriteString("\nFRONTMATTER (other keys are allowed and ignored):\n")
	for _, key := range keys {
		var in []string
		for _, k := range kinds {
			if k.Knows(key.Name) {
				in = append(in, k.Name)
			}
		}
		b.WriteString("   " + pad(key.Name, 12) + key.Doc + " (" + strings.Join(in, ", ") + ")\n")
	}
	return b.String()
}

func pad(s string, n int) string {
	if len(s) >= n {
		return s + " "
	}
	return s + strings.Repeat(" ", n-len(s))
}
