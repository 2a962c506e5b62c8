package compiler

import (
	"fmt"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kbqdev/kbq/compiler/checks"
	"github.com/kbqdev/kbq/knowledge"
	"go.yaml.in/yaml/v3"
)

// meta is what the compiler takes from a document's frontmatter.
type meta struct {
	title         string
	description   string // searched with the title
	tags          []string
	source        string
	importance    float64
	hasImportance bool
	id            int
	idLine, idCol int
	attachment    string
	attLine       int
	attCol        int
	// created is when a memory was created or an article fetched; expires,
	// when set, is when the document stops being worth keeping.
	created, expires time.Time
	// status is "", draft, deprecated or superseded ("active" is "");
	// supersedes the documents it replaces, with where each is written;
	// reviewed when a person last checked it.
	status     string
	supersedes []ref
	// contradicts the documents it disputes.
	contradicts []ref
	reviewed    time.Time
	// extra holds the values of the registry's Meta keys.
	extra map[string]string
}

// ref is a reference to another document as written in frontmatter.
type ref = checks.Ref

// check validates the value of one frontmatter key and stores it in m.
type check func(v *yaml.Node, m *meta, r reporter)

// keyChecks attaches a validator to every frontmatter key of the registry
// (knowledge.Keys) that has code of its own; Meta keys share checkMeta.
var keyChecks = map[string]check{
	"status":      checkStatus,
	"supersedes":  checkSupersedes,
	"contradicts": checkContradicts,
	"reviewed":    checkReviewed,
	"version":     checkVersion,
	"updated":     checkISOTime,
	"title":       checkTitle,
	"description": checkDescription,
	"tags":        checkTags,
	"id":          checkID,
	"created":     checkCreated,
	"fetched":     checkFetched,
	"expires":     checkExpires,
	"importance":  checkImportance,
	"attachment":  checkAttachment,
}

// keyCheck returns the validator of key for a document of kind, or nil
// when the kind does not know the key. An article's source is its URL.
func keyCheck(kind knowledge.Kind, key string) check {
	switch {
	case !kind.Knows(key):
		return nil
	case key == "source" && kind.Name == knowledge.KindArticle:
		return checkURL
	case key == "source":
		return checkSourceString
	}
	if c := keyChecks[key]; c != nil {
		return c
	}
	if k, ok := knowledge.LookupKey(key); ok && k.Meta {
		return metaCheck(key)
	}
	return nil
}

// readMeta validates the frontmatter of a document of kind and returns its
// metadata. fm.fields is nil when the frontmatter was unusable (already
// reported) or absent.
func readMeta(kind string, fm frontmatter, r reporter, foreign []string) meta {
	var m meta
	m.tags = capTags(fm.tagsLine, 1, 1, r)
	rules, _ := knowledge.LookupKind(kind)
	if fm.fields == nil {
		if fm.present {
			return m // the YAML problem is already reported
		}
		if len(rules.Required) > 0 && !rules.FrontmatterOptional {
			r(1, 1, Error, "missing frontmatter: "+rules.RequiredHint+" (start the file with a --- block)")
		}
		return m
	}
	seen := make(map[string]*yaml.Node)
	for i := 0; i+1 < len(fm.fields.Content); i += 2 {
		k, v := fm.fields.Content[i], fm.fields.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			r(k.Line, k.Column, Error, "frontmatter keys must be plain names, not "+describeNode(k))
			continue
		}
		if first, dup := seen[k.Value]; dup {
			r(k.Line, k.Column, Error, fmt.Sprintf("duplicate key %q (first set on line %d)", k.Value, first.Line))
			continue
		}
		seen[k.Value] = k
		if slices.Contains(foreign, k.Value) {
			continue // another tool's
		}
		if check := keyCheck(rules, k.Value); check != nil {
			v = resolveAlias(v)
			check(v, &m, keyReporter(k.Value, r))
		}
	}
	var missing []string
	for _, key := range slices.Sorted(slices.Values(rules.Required)) {
		if seen[key] == nil {
			missing = append(missing, key)
		}
	}
	if len(missing) > 0 {
		hint := rules.RequiredHint
		if kind == knowledge.KindContext {
			if keys := docSiteKeys(seen); len(keys) > 0 {
				hint += "; its frontmatter (" + strings.Join(keys, ", ") + ") looks like a documentation page's: a context file is loaded into every agent session, so move a page elsewhere in .kb/, where it is a topic"
			}
		}
		r(fm.fields.Line, fm.fields.Column, Error, fmt.Sprintf("missing required %s %s: %s",
			plural(len(missing), "field", "fields"), strings.Join(missing, ", "), hint))
	}
	return m
}

// docSiteKeys lists the keys of seen that documentation site generators
// (Hugo, Jekyll, Docusaurus, mkdocs) put in a page's frontmatter.
func docSiteKeys(seen map[string]*yaml.Node) []string {
	var keys []string
	for _, k := range []string{"weight", "slug", "linkTitle", "description", "sidebar_position", "sidebar_label", "layout", "menu", "nav_order", "permalink", "aliases", "draft", "date", "keywords", "toc"} {
		if seen[k] != nil {
			keys = append(keys, k)
		}
	}
	return keys
}

func resolveAlias(v *yaml.Node) *yaml.Node {
	for v.Kind == yaml.AliasNode && v.Alias != nil {
		v = v.Alias
	}
	return v
}

// keyReporter prefixes messages with the key they are about.
func keyReporter(key string, r reporter) reporter {
	return func(line, col int, sev Severity, msg string) {
		r(line, col, sev, key+": "+msg)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func isScalar(v *yaml.Node) bool { return v.Kind == yaml.ScalarNode }

func isNull(v *yaml.Node) bool { return v.Kind == yaml.ScalarNode && v.ShortTag() == "!!null" }

func checkVersion(v *yaml.Node, _ *meta, r reporter) {
	n, ok := intValue(v)
	switch {
	case !ok:
		r(v.Line, v.Column, Error, "must be an integer ≥ 1, not "+describeNode(v))
	case n < 1:
		r(v.Line, v.Column, Error, fmt.Sprintf("must be ≥ 1, not %d", n))
	}
}

func checkID(v *yaml.Node, m *meta, r reporter) {
	n, ok := intValue(v)
	switch {
	case !ok:
		r(v.Line, v.Column, Error, "must be an integer ≥ 1, not "+describeNode(v))
	case n < 1:
		r(v.Line, v.Column, Error, fmt.Sprintf("must be ≥ 1, not %d", n))
	default:
		m.id, m.idLine, m.idCol = n, v.Line, v.Column
	}
}

func intValue(v *yaml.Node) (int, bool) {
	if !isScalar(v) || v.ShortTag() != "!!int" {
		return 0, false
	}
	var n int
	if err := v.Decode(&n); err != nil {
		return 0, false
	}
	return n, true
}

// isoLayouts are the ISO 8601 forms accepted where a timestamp may omit the
// time or the zone.
var isoLayouts = []string{
	time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04",
	"2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02 15:04",
	"2006-01-02",
}

func checkISOTime(v *yaml.Node, _ *meta, r reporter) { parseISOTime(v, r) }

// parseISOTime parses an ISO 8601 timestamp, reporting one that is not.
func parseISOTime(v *yaml.Node, r reporter) (time.Time, bool) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be an ISO 8601 timestamp such as 2024-05-01 or 2024-05-01T10:00:00Z, not "+describeNode(v))
		return time.Time{}, false
	}
	for _, layout := range isoLayouts {
		if t, err := time.Parse(layout, v.Value); err == nil {
			return t, true
		}
	}
	r(v.Line, v.Column, Error, fmt.Sprintf("%q is not an ISO 8601 timestamp (write 2024-05-01 or 2024-05-01T10:00:00Z)", v.Value))
	return time.Time{}, false
}

func checkFetched(v *yaml.Node, m *meta, r reporter) { m.created, _ = parseISOTime(v, r) }

func checkExpires(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be a date such as 2027-01-31 (when kbc prune may remove the document), not "+describeNode(v))
		return
	}
	if t, ok := parseISOTime(v, r); ok {
		m.expires = t
	}
}

// checkStatus reads a status. Other tools use the key too (mkdocs-material's
// status: new): a value kbq does not know is a warning, and the document
// is active.
func checkStatus(v *yaml.Node, m *meta, r reporter) {
	i := -1
	if isScalar(v) && !isNull(v) {
		i = slices.IndexFunc(knowledge.Statuses, func(s string) bool { return strings.EqualFold(s, strings.TrimSpace(v.Value)) })
	}
	if i < 0 {
		r(v.Line, v.Column, Warning, "is not one of kbq's statuses ("+strings.Join(knowledge.Statuses, ", ")+"): "+describeNode(v)+
			" is read as active; if another tool owns status here, say so in "+ConfigPath+" (foreign_keys: [status])")
		return
	}
	if st := knowledge.Statuses[i]; st != "active" {
		m.status = st
	}
}

func checkSupersedes(v *yaml.Node, m *meta, r reporter) {
	m.supersedes = append(m.supersedes, refs(v, r)...)
}

func checkContradicts(v *yaml.Node, m *meta, r reporter) {
	m.contradicts = append(m.contradicts, refs(v, r)...)
}

// refs reads a topic key or memory:ID, or a list of them.
func refs(v *yaml.Node, r reporter) []ref {
	var out []ref
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = v.Content
	}
	for _, item := range items {
		item = resolveAlias(item)
		if !isScalar(item) || isNull(item) || strings.TrimSpace(item.Value) == "" {
			r(item.Line, item.Column, Error, "must be a topic key such as deploy/steps or memory:ID, or a list of them, not "+describeNode(item))
			continue
		}
		out = append(out, ref{Text: strings.TrimSpace(item.Value), Line: item.Line, Col: item.Column})
	}
	return out
}

func checkReviewed(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be a date such as 2026-06-01 (when a person last checked the document), not "+describeNode(v))
		return
	}
	if t, ok := parseISOTime(v, r); ok {
		m.reviewed = t
	}
}

func checkCreated(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be an RFC 3339 timestamp with a zone such as 2024-05-01T10:00:00Z, not "+describeNode(v))
		return
	}
	t, err := time.Parse(time.RFC3339Nano, v.Value)
	m.created = t
	if err != nil {
		hint := "write it like 2024-05-01T10:00:00Z or 2024-05-01T12:00:00+02:00"
		for _, layout := range isoLayouts[1:] {
			if _, err := time.Parse(layout, v.Value); err == nil {
				hint = "it needs a time and a zone: " + hint
				break
			}
		}
		r(v.Line, v.Column, Error, fmt.Sprintf("%q is not an RFC 3339 timestamp; %s", v.Value, hint))
	}
}

func checkTitle(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be text, not "+describeNode(v))
		return
	}
	m.title = strings.TrimSpace(v.Value)
	if len(m.title) > maxTitle {
		r(v.Line, v.Column, Warning, fmt.Sprintf("is %d bytes: the first %d are kept (it is stored with every chunk; put long text in the body)", len(m.title), maxTitle))
		m.title = cutText(m.title, maxTitle)
	}
}

// maxDescription bounds the description indexed with every chunk of a
// document.
const maxDescription = 1 << 10

func checkDescription(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be text, not "+describeNode(v))
		return
	}
	m.description = strings.TrimSpace(v.Value)
	if len(m.description) > maxDescription {
		r(v.Line, v.Column, Warning, fmt.Sprintf("is %d bytes: the first %d are searched (it is searched with every chunk; put long text in the body)", len(m.description), maxDescription))
		m.description = strings.ToValidUTF8(m.description[:maxDescription], "")
	}
}

func checkTags(v *yaml.Node, m *meta, r reporter) {
	switch {
	case isNull(v):
		m.tags = nil
	case isScalar(v):
		m.tags = splitTags(v.Value)
	case v.Kind == yaml.SequenceNode:
		m.tags = m.tags[:0:0]
		for _, item := range v.Content {
			item = resolveAlias(item)
			if !isScalar(item) || isNull(item) {
				r(item.Line, item.Column, Error, "every tag must be text, not "+describeNode(item))
				continue
			}
			if t := strings.TrimSpace(item.Value); t != "" {
				m.tags = append(m.tags, t)
			}
		}
	default:
		r(v.Line, v.Column, Error, "must be a list of strings or a comma-separated string, not "+describeNode(v))
	}
	m.tags = capTags(m.tags, v.Line, v.Column, r)
}

func checkSourceString(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be text such as user-told or extracted, not "+describeNode(v))
		return
	}
	m.source = v.Value
}

func checkURL(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be an absolute URL, not "+describeNode(v))
		return
	}
	u, err := url.Parse(v.Value)
	if err != nil || !u.IsAbs() || u.Host == "" {
		r(v.Line, v.Column, Error, fmt.Sprintf("%q is not an absolute URL (write https://host/path)", v.Value))
		return
	}
	m.source = v.Value
}

func checkImportance(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || (v.ShortTag() != "!!int" && v.ShortTag() != "!!float") {
		r(v.Line, v.Column, Error, "must be a number from 0 to 1, not "+describeNode(v))
		return
	}
	f, err := strconv.ParseFloat(v.Value, 64)
	if err != nil || f < 0 || f > 1 {
		r(v.Line, v.Column, Error, fmt.Sprintf("must be a number from 0 to 1, not %s", v.Value))
		return
	}
	m.importance, m.hasImportance = f, true
}

func checkAttachment(v *yaml.Node, m *meta, r reporter) {
	if !isScalar(v) || isNull(v) {
		r(v.Line, v.Column, Error, "must be a path under attachments/, not "+describeNode(v))
		return
	}
	p := strings.TrimPrefix(path.Clean(strings.TrimPrefix(v.Value, "./")), "attachments/")
	if p == "." || strings.HasPrefix(p, "../") || p == ".." || path.IsAbs(p) {
		r(v.Line, v.Column, Error, fmt.Sprintf("%q is not a path under attachments/", v.Value))
		return
	}
	m.attachment, m.attLine, m.attCol = "attachments/"+p, v.Line, v.Column
}

// metaCheck validates a Meta key: one line of text, at most
// knowledge.MaxMetaValue bytes.
func metaCheck(key string) check {
	return func(v *yaml.Node, m *meta, r reporter) {
		if !isScalar(v) || isNull(v) || strings.TrimSpace(v.Value) == "" || strings.ContainsAny(v.Value, "\n\r") {
			r(v.Line, v.Column, Error, "must be one line of text, not "+describeNode(v))
			return
		}
		value := strings.TrimSpace(v.Value)
		if len(value) > knowledge.MaxMetaValue {
			r(v.Line, v.Column, Error, fmt.Sprintf("is %d bytes, over the %d it may hold", len(value), knowledge.MaxMetaValue))
			return
		}
		if m.extra == nil {
			m.extra = make(map[string]string)
		}
		m.extra[key] = value
	}
}
