package compiler

import (
	"slices"
	"strconv"
	"strings"

	segment "github.com/blugelabs/bluge_segment_api"

	"github.com/kbqdev/kbq/artifact"
	"github.com/kbqdev/kbq/artifact/postings"
	"github.com/kbqdev/kbq/knowledge"
)

// indexDocument builds the index documents of d's chunks with fb, appends
// them to out, adds their text fields to pw, and fills d.Chunks and
// d.Fields with the counts the manifest keeps.
func indexDocument(d *document, fb *fieldBuilder, out []segment.Document, pw *postings.Writer) []segment.Document {
	// The description says what the document is for: searched with every
	// chunk, as the title is.
	titleText := []byte(d.Title + "\n" + topicWords(d.Topic) + "\n" + d.meta.description)
	tags := []byte(strings.Join(d.Tags, artifact.TagSeparator))
	path := []byte(d.Path)
	facets := facetTerms(d)
	var stats artifact.DocFields
	factor := 1.0
	if d.meta.hasImportance {
		factor = artifact.ImportanceFactor(d.meta.importance)
	}
	shared := sharedFields(d)
	limit := 0
	if d.tooManyWords {
		limit = maxDocumentWords
	}
	fb.startDocument(limit)
	// Every chunk has the document's title and tags: analyzed once.
	title := fb.analyze(titleText, nil)
	tagTerms := fb.analyze(tags, nil)
	text := d.src.Data
	pw.StartDocument(knowledge.ScopeDepth(d.Scope), path)
	for i, c := range d.chunks {
		startLine, endLine := d.fileLine(c.start, false), d.fileLine(max(c.end-1, c.start), true)
		heading, body := []byte(c.heading), text[c.start:c.end]
		headingTerms := fb.analyze(heading, fb.heading[:0])
		bodyTerms := fb.analyze(body, fb.body[:0])
		fb.heading, fb.body = headingTerms.terms, bodyTerms.terms
		// In artifact.TextFields order: the postings number fields so.
		textFields := [...]analyzed{title, headingTerms, tagTerms, bodyTerms}
		pw.AddDoc(factor)
		for field, f := range textFields {
			pw.SetLength(field, f.length)
			for _, t := range f.terms {
				pw.AddTermKey(field, t.id, t.term, t.freq)
			}
			if f.length > 0 {
				stats.Add(artifact.TextFields[field], artifact.FieldStats{Docs: 1, Tokens: uint64(f.length)})
			}
		}
		// The text fields are stored, the title aside (the display title
		// is), and indexed only in the postings.
		doc := make(indexDoc, 0, 12+len(shared))
		doc = append(doc,
			keyword(artifact.FieldPath, path, true, path),
			keyword(artifact.FieldFacet, nil, false, facets...),
			stored(artifact.FieldHeading, heading),
			stored(artifact.FieldTags, tags),
			stored(artifact.FieldBody, body),
		)
		doc = append(doc, shared...)
		doc = append(doc,
			stored(artifact.FieldLines, []byte(strconv.Itoa(startLine)+"-"+strconv.Itoa(endLine))),
			stored(artifact.FieldSpan, []byte(strconv.Itoa(c.start)+"-"+strconv.Itoa(c.end))),
			stored(artifact.FieldChunk, []byte(strconv.Itoa(i))),
		)
		if i == 0 {
			doc = d.firstChunkFields(doc)
		}
		out = append(out, doc)
	}
	d.Chunks = len(d.chunks)
	d.Fields = stats
	return out
}

// sharedFields are the stored fields every chunk of d has.
func sharedFields(d *document) []*indexField {
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
	if len(d.Meta) > 0 {
		shared = append(shared, stored(artifact.FieldMeta, artifact.EncodeMeta(d.Meta)))
	}
	return shared
}

// firstChunkFields adds to doc what only d's first chunk stores: the
// blob (stored in every chunk, it made the 30x artifact 5% larger) and
// the frontmatter.
func (d *document) firstChunkFields(doc indexDoc) indexDoc {
	doc = append(doc, stored(artifact.FieldBlob, []byte(d.Blob)))
	if d.body > 0 {
		doc = append(doc, stored(artifact.FieldFrontmatter, d.src.Data[:d.body]))
	}
	return doc
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
	for key, value := range d.Meta {
		if knowledge.IsFilter(key) {
			terms = append(terms, artifact.FacetMeta(key, value))
		}
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
