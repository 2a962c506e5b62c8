package documents

import "testing"

func TestShiftHeadings(t *testing.T) {
	for in, want := range map[string]string{
		"# Rules\n\nText.":                         "#### Rules\n\nText.",
		"## A\n### B\n##### C":                     "##### A\n###### B\n###### C",
		"#hashtag is not a heading":                "#hashtag is not a heading",
		"    # indented code":                      "    # indented code",
		"```sh\n# a comment\n```\n# After":         "```sh\n# a comment\n```\n#### After",
		"~~~\n## in a fence\n~~~~\ntext":           "~~~\n## in a fence\n~~~~\ntext",
		"Title\n=====\n\nSub\n---\n\nbody":         "#### Title\n\n##### Sub\n\nbody",
		"para\n\n---\n\nafter a thematic break":    "para\n\n---\n\nafter a thematic break",
		"#":                                        "####",
		"````md\n```sh\n# in\n```\n````\n## After": "````md\n```sh\n# in\n```\n````\n##### After",
	} {
		if got := shiftHeadings(in, 3, nil); got != want {
			t.Errorf("shiftHeadings(%q) = %q, want %q", in, got, want)
		}
	}
}
