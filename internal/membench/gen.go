// Package membench is kbq's own agent-memory benchmark: a seeded
// generator of project histories written as kbq memories and topics
// (current state that changes, decisions replaced, claims disputed and
// resolved, commands, failed approaches, constraints, blockers and their
// fixes, and questions nothing answers), graded questions naming the
// sources an answer needs and those it must not return, and the metrics
// of an agent's use: strict accuracy, MRR, nDCG@5, the stale-result rate
// and abstention, per category.
package membench

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// Categories of questions.
const (
	State        = "state"        // current state that changed: the latest only
	Decision     = "decision"     // a decision replaced: the newer topic only
	Dispute      = "dispute"      // two claims disputing each other: both
	Resolved     = "resolved"     // a dispute resolved: the resolution only
	Failed       = "failed"       // a failed approach
	Constraint   = "constraint"   // a rule to keep
	TwoSessions  = "two-sessions" // an answer in two memories: both
	Unanswerable = "unanswerable" // nothing answers it
)

// Categories lists them in the order reports use.
var Categories = []string{State, Decision, Dispute, Resolved, Failed, Constraint, TwoSessions, Unanswerable}

// A Question is asked of one project. Required are the paths an answer
// needs (every one of them: all must be found); Harmful those it must not
// return (superseded, contradicted); Grades the relevance of each path
// that has any (3 for a required one). An unanswerable question has no
// Required, and its right answer is nothing.
type Question struct {
	ID, Project, Category, Text string
	Required, Harmful           []string
	Grades                      map[string]int
}

// A Project is one repository's knowledge files, by path.
type Project struct {
	Name  string
	Files map[string]string
}

// A Bench is the projects and the questions asked of them.
type Bench struct {
	Projects  []Project
	Questions []Question
}

// Generate writes projects projects' histories from seed, each with
// memories enough for perProject questions (eight categories, about
// evenly), and the questions.
func Generate(seed uint64, projects, perProject int) *Bench {
	b := &Bench{}
	rng := rand.New(rand.NewPCG(seed, 0x6b6271))
	names := slices.Clone(projectNames)
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	for p := range projects {
		g := &gen{rng: rng, name: names[p%len(names)] + suffix(p/len(names)), files: map[string]string{},
			day: time.Date(2025, 1, 6, 9, 0, 0, 0, time.UTC)}
		g.services = pick(rng, services, 6)
		for i := 0; i < perProject; i++ {
			switch Categories[i%len(Categories)] {
			case State:
				g.state()
			case Decision:
				g.decision()
			case Dispute:
				g.dispute(false)
			case Resolved:
				g.dispute(true)
			case Failed:
				g.failed()
			case Constraint:
				g.constraint()
			case TwoSessions:
				g.twoSessions()
			case Unanswerable:
				g.unanswerable()
			}
		}
		// Everyday notes no question is about, as real memory has.
		for range perProject / 2 {
			g.filler()
		}
		b.Projects = append(b.Projects, Project{Name: g.name, Files: g.files})
		for i, q := range g.questions {
			q.ID = fmt.Sprintf("%s-%03d", g.name, i+1)
			q.Project = g.name
			b.Questions = append(b.Questions, q)
		}
	}
	return b
}

func suffix(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprint(n + 1)
}

// gen writes one project.
type gen struct {
	rng       *rand.Rand
	name      string
	services  []string
	files     map[string]string
	questions []Question
	nextID    int
	day       time.Time
	used      map[string]bool // facts and subjects taken, so each is asked once
}

// memory writes a memory of text, with extra frontmatter lines, on the
// next day of the history; it returns its path and id.
func (g *gen) memory(text string, front ...string) (string, int) {
	g.nextID++
	g.day = g.day.Add(time.Duration(20+g.rng.IntN(60)) * time.Hour)
	slug := slugOf(text)
	path := fmt.Sprintf(".kb/memories/%03d-%s.md", g.nextID, slug)
	var b strings.Builder
	fmt.Fprintf(&b, "---\nid: %d\ncreated: %s\n", g.nextID, g.day.Format(time.RFC3339))
	for _, f := range front {
		b.WriteString(f + "\n")
	}
	b.WriteString("---\n" + text + "\n")
	g.files[path] = b.String()
	return path, g.nextID
}

// topic writes a topic at .kb/KEY.md.
func (g *gen) topic(key, title, body string, front ...string) string {
	path := ".kb/" + key + ".md"
	var b strings.Builder
	if len(front) > 0 {
		b.WriteString("---\n" + strings.Join(front, "\n") + "\n---\n")
	}
	fmt.Fprintf(&b, "# %s\n\n%s\n", title, body)
	g.files[path] = b.String()
	return path
}

func (g *gen) ask(cat, text string, required, harmful []string) {
	grades := map[string]int{}
	for _, r := range required {
		grades[r] = 3
	}
	g.questions = append(g.questions, Question{Category: cat, Text: text, Required: required, Harmful: harmful, Grades: grades})
}

// take returns an unused element of list (by its first field), marking it.
func take[T any](g *gen, list []T, key func(T) string) T {
	if g.used == nil {
		g.used = map[string]bool{}
	}
	for range 200 {
		x := list[g.rng.IntN(len(list))]
		if k := key(x); !g.used[k] {
			g.used[k] = true
			return x
		}
	}
	return list[g.rng.IntN(len(list))]
}

func (g *gen) service() string { return g.services[g.rng.IntN(len(g.services))] }

// state: a fact of a service that changed twice or three times, each
// change superseding the last; asked, only the current value answers.
func (g *gen) state() {
	f := take(g, facts, func(f fact) string { return f.name })
	svc := g.service()
	values := pick(g.rng, f.values, 2+g.rng.IntN(2))
	var paths []string
	prev := 0
	for i, v := range values {
		text := fmt.Sprintf(f.first, svc, v)
		var front []string
		if i > 0 {
			text = fmt.Sprintf(f.change, svc, v, values[i-1])
			front = append(front, fmt.Sprintf("supersedes: [memory:%d]", prev))
		}
		p, id := g.memory(text, front...)
		paths, prev = append(paths, p), id
	}
	g.ask(State, fmt.Sprintf(f.question, svc), paths[len(paths)-1:], paths[:len(paths)-1])
}

// decision: a decision topic replaced by a newer one.
func (g *gen) decision() {
	d := take(g, decisions, func(d decisionT) string { return d.subject })
	svc := g.service()
	key := "decisions/" + svc + "-" + slugOf(d.subject)
	old := g.topic(key, fmt.Sprintf("Decision: %s for %s", d.subject, svc),
		fmt.Sprintf("For %s we chose %s for %s, because %s.", svc, d.first, d.subject, d.why))
	newer := g.topic(key+"-v2", fmt.Sprintf("Decision: %s for %s, revisited", d.subject, svc),
		fmt.Sprintf("For %s we now use %s for %s instead of %s: %s.", svc, d.second, d.subject, d.first, d.whyChange),
		"supersedes: ["+key+"]")
	g.ask(Decision, fmt.Sprintf("What do we use for %s in %s?", d.subject, svc), []string{newer}, []string{old})
}

// dispute: two memories disagree; resolved, a third supersedes both.
func (g *gen) dispute(resolve bool) {
	c := take(g, claims, func(c claim) string { return c.subject })
	svc := g.service()
	vals := pick(g.rng, c.values, 3)
	a, idA := g.memory(fmt.Sprintf(c.text, svc, vals[0]))
	b, idB := g.memory(fmt.Sprintf(c.other, svc, vals[1]), fmt.Sprintf("contradicts: [memory:%d]", idA))
	if !resolve {
		g.ask(Dispute, fmt.Sprintf(c.question, svc), []string{a, b}, nil)
		return
	}
	r, _ := g.memory(fmt.Sprintf(c.resolution, svc, vals[2]), fmt.Sprintf("supersedes: [memory:%d, memory:%d]", idA, idB))
	g.ask(Resolved, fmt.Sprintf(c.question, svc), []string{r}, []string{a, b})
}

// failed: an approach that failed, beside one that worked elsewhere.
func (g *gen) failed() {
	f := take(g, failures, func(f failure) string { return f.problem })
	svc := g.service()
	p, _ := g.memory(fmt.Sprintf("We tried %s to fix %s in %s; it failed: %s.", f.tried, f.problem, svc, f.why))
	g.memory(fmt.Sprintf("%s in %s is tracked in the %s board.", capital(f.problem), g.service(), g.name))
	g.ask(Failed, fmt.Sprintf("Which approach failed for %s in %s?", f.problem, svc), []string{p}, nil)
}

// constraint: a rule.
func (g *gen) constraint() {
	c := take(g, constraints, func(c constraintT) string { return c.rule })
	svc := g.service()
	p, _ := g.memory(fmt.Sprintf(c.rule, svc))
	g.ask(Constraint, fmt.Sprintf(c.question, svc), []string{p}, nil)
}

// twoSessions: a blocker noted in one session, its fix in a later one.
func (g *gen) twoSessions() {
	bl := take(g, blockers, func(b blocker) string { return b.problem })
	// One blocker a service, or the question could not tell which.
	svc := take(g, g.services, func(s string) string { return "blocker of " + s })
	a, _ := g.memory(fmt.Sprintf("Blocker for the %s release: %s.", svc, bl.problem))
	for range 1 + g.rng.IntN(2) {
		g.filler()
	}
	b, _ := g.memory(fmt.Sprintf("Fixed %s by %s; %s can ship.", shorten(bl.problem), bl.fix, svc))
	g.ask(TwoSessions, fmt.Sprintf("Is the blocker of the %s release resolved, and how?", svc), []string{a, b}, nil)
}

// unanswerable: a question about something nothing in the project says.
func (g *gen) unanswerable() {
	q := take(g, unknowns, func(s string) string { return s })
	g.ask(Unanswerable, fmt.Sprintf(q, g.service()), nil, nil)
}

// filler: a note of everyday work.
func (g *gen) filler() {
	g.memory(fmt.Sprintf(fillers[g.rng.IntN(len(fillers))], g.service(), g.name))
}

func pick[T any](rng *rand.Rand, list []T, n int) []T {
	idx := rng.Perm(len(list))[:min(n, len(list))]
	out := make([]T, len(idx))
	for i, j := range idx {
		out[i] = list[j]
	}
	return out
}

func slugOf(text string) string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return (r < 'a' || r > 'z') && (r < '0' || r > '9') }) {
		words = append(words, w)
		if len(words) == 4 {
			break
		}
	}
	return strings.Join(words, "-")
}

func capital(s string) string { return strings.ToUpper(s[:1]) + s[1:] }

// shorten is the first words of a problem, as a later note names it.
func shorten(problem string) string {
	w := strings.Fields(problem)
	return strings.Join(w[:min(4, len(w))], " ")
}
