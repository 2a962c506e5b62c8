package gitsource

import (
	"bufio"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// go-git's revision parser accepts more than it resolves: it reads
// HEAD@{1}, main@{upstream} and HEAD:path as HEAD, and HEAD^{tree} as the
// commit. A revision here either resolves as git rev-parse resolves it or
// is refused (ErrUnknownRevision, exit 2), never silently read as another.
// Reflog entries (REF@{N}, @{N}) are read from the reflog; every other
// @{…} form, a path (REV:PATH), a message search (:/TEXT, REV^{/TEXT})
// and a peel to anything but a commit are refused with the command that
// names the commit.

// reflogRev matches REF@{N} and its suffix (HEAD@{2}~1).
var reflogRev = regexp.MustCompile(`^([^@{}]*)@\{([0-9]+)\}(.*)$`)

// checkRevision refuses what go-git would read as another revision, and
// rewrites reflog entries to the commits they name.
func (r *Repo) checkRevision(rev string) (string, error) {
	refuse := func(what string) error {
		return fmt.Errorf("%q: %w: kbc does not read %s; give the commit itself: $(git rev-parse '%s')", rev, ErrUnknownRevision, what, rev)
	}
	if m := reflogRev.FindStringSubmatch(rev); m != nil {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return "", refuse("reflog entries that far back")
		}
		h, err := r.reflogEntry(m[1], n)
		if err != nil {
			return "", fmt.Errorf("%q: %w: %v", rev, ErrUnknownRevision, err)
		}
		rev = h + m[3]
	}
	switch {
	case strings.Contains(rev, "@{"):
		return "", refuse("@{…} other than a reflog entry (@{upstream}, @{-1}, dates)")
	case strings.Contains(rev, ":"):
		return "", refuse("a path or a message search (REV:PATH, :/TEXT)")
	}
	for rest := rev; ; {
		i := strings.Index(rest, "^{")
		if i < 0 {
			break
		}
		end := strings.Index(rest[i:], "}")
		if end < 0 {
			return "", refuse("an unclosed ^{")
		}
		if peel := rest[i+2 : i+end]; peel != "" && peel != "commit" {
			return "", refuse("^{" + peel + "} (a peel to another object, or a message search)")
		}
		rest = rest[i+end:]
	}
	return rev, nil
}

// reflogEntry returns the commit of the n-th entry back of ref's reflog
// (HEAD when ref is "HEAD", the branch HEAD is on when ref is "").
func (r *Repo) reflogEntry(ref string, n int) (string, error) {
	name, err := r.refName(ref)
	if err != nil {
		return "", err
	}
	if r.gitDir == nil {
		return "", fmt.Errorf("the reflog of %s cannot be read here", name)
	}
	f, err := r.gitDir.Open("logs/" + name)
	if err != nil {
		return "", fmt.Errorf("%s has no reflog", name)
	}
	defer f.Close()
	var news []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && plumbing.IsHash(fields[1]) {
			news = append(news, fields[1])
		}
	}
	if err := sc.Err(); err != nil {
		return "", fmt.Errorf("read the reflog of %s: %w", name, err)
	}
	if n >= len(news) {
		return "", fmt.Errorf("the log for %s only has %d entries", strings.TrimPrefix(name, "refs/heads/"), len(news))
	}
	return news[len(news)-1-n], nil
}

// refName is the full name of the reference ref names, as git finds it.
func (r *Repo) refName(ref string) (string, error) {
	if ref == "" {
		head, err := r.git.Reference(plumbing.HEAD, false)
		if err != nil || head.Type() != plumbing.SymbolicReference {
			return "", fmt.Errorf("HEAD is on no branch")
		}
		return head.Target().String(), nil
	}
	if ref == "HEAD" {
		return "HEAD", nil
	}
	for _, name := range []string{ref, "refs/" + ref, "refs/tags/" + ref, "refs/heads/" + ref, "refs/remotes/" + ref, "refs/remotes/" + ref + "/HEAD"} {
		if _, err := r.git.Reference(plumbing.ReferenceName(name), false); err == nil {
			return name, nil
		}
	}
	return "", fmt.Errorf("%s is not a branch, tag or reference", ref)
}
