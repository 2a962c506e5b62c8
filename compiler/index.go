package compiler

import (
	"slices"
	"strconv"
	"strings"

	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/postings"
)

// indexDocument builds the index documents of d's chunks with fb, appends
// them to out, adds their text fields to pw, and fills d.Chunks and
// d.Fields with the counts the manifest keeps.
func indexDocument(d *document, fb *fieldBuilder, out []segment.Document, pw *postings.Writer) []segment.Document {
	titleText := []byte(d.Title + "\n" + topicWords(d.Topic))
	tags := []byte(strings.Join(d.Tags, artifact.TagSeparator))
	path := []byte(d.Path)
	facets := facetTerms(d)
	var stats artifact.DocFields
	factor := 1.0
	if d.meta.hasImportance {
		factor = artifact.ImportanceFactor(d.meta.importance)
	}
	shared := []*indexField{
		stored(artifact.FieldTopic, []byte(d.Topic)),
		stored(artifact.FieldKind, []byte(d.Kind)),
		stored(artifact.FieldScope, []byte(d.Scope)),
		stored(artifact.FieldDisplayTitle, []byte(d.Title)),
	}
	if d.meta.hasImportance {
		shared = append(shared, stored(artifact.FieldImportance, []byte(strconv.FormatFloat(d.meta.importance, 'g', -1, 64))))
	}
	if d.Source != "" {
		shared = append(shared, stored(artifact.FieldSource, []byte(d.Source)))
	}
	// Every chunk has the document's title and tags: analyzed once, the
	// fields are shared, as they are never changed.
	title := fb.text(artifact.FieldTitle, titleText, false)
	tagsField := fb.text(artifact.FieldTags, tags, true)
	text := d.src.text
	for i, c := range d.chunks {
		startLine, endLine := d.src.lineOf(c.start), d.src.lineOf(max(c.end-1, c.start))
		// In artifact.TextFields order: the postings number fields so.
		textFields := []*indexField{
			title,
			fb.text(artifact.FieldHeading, []byte(c.heading), true),
			tagsField,
			fb.text(artifact.FieldBody, text[c.start:c.end], true),
		}
		pw.AddDoc(factor, i == 0)
		doc := make(indexDoc, 0, 12+len(shared))
		doc = append(doc,
			keyword(artifact.FieldPath, path, true, path),
			keyword(artifact.FieldFacet, nil, false, facets...),
		)
		for i, f := range textFields {
			pw.SetLength(i, f.length)
			for _, t := range f.terms {
				pw.AddTerm(i, t.term, t.freq)
			}
			if f.store {
				doc = append(doc, stored(f.name, f.value))
			}
		}
		doc = append(doc, shared...)
		doc = append(doc,
			stored(artifact.FieldLines, []byte(strconv.Itoa(startLine)+"-"+strconv.Itoa(endLine))),
			stored(artifact.FieldSpan, []byte(strconv.Itoa(c.start)+"-"+strconv.Itoa(c.end))),
			stored(artifact.FieldChunk, []byte(strconv.Itoa(i))),
		)
		if i == 0 {
			// The blob once per document: stored in every chunk it made the
			// 30x artifact 5% larger.
			doc = append(doc, stored(artifact.FieldBlob, []byte(d.Blob)))
			if d.body > 0 {
				doc = append(doc, stored(artifact.FieldFrontmatter, text[:d.body]))
			}
		}
		for _, f := range textFields {
			if f.length > 0 {
				stats.Add(f.name, artifact.FieldStats{Docs: 1, Tokens: uint64(f.length)})
			}
		}
		out = append(out, doc)
	}
	d.Chunks = len(d.chunks)
	d.Fields = stats
	return out
}

// facetTerms lists the distinct facet terms of d.
func facetTerms(d *document) [][]byte {
	terms := []string{artifact.FacetKind(d.Kind), artifact.FacetScope(d.Scope), artifact.FacetTopic(d.Topic)}
	for _, t := range d.Tags {
		terms = append(terms, artifact.FacetTag(t))
	}
	for _, s := range d.ShadowedBy {
		terms = append(terms, artifact.FacetShadowedBy(s))
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	out := make([][]byte, len(terms))
	for i, t := range terms {
		out[i] = []byte(t)
	}
	return out
}

// topicWords turns a topic key into words for the title field:
// "deploy/rollback-steps" becomes "deploy rollback steps".
func topicWords(topic string) string {
	return strings.NewReplacer("/", " ", "-", " ", "_", " ", ".", " ").Replace(topic)
}
