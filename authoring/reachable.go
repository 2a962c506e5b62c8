package authoring

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kbqdev/kbq/knowledge"
)

// ErrUnreachable means knowledge written into a directory would never be
// built, and so never found.
var ErrUnreachable = errors.New("knowledge written there would never be found")

// Reachable refuses to write into scopeDir/.kb/sub (sub is slash-separated:
// "memories", or a topic's folder), below root, when no build would read
// what is written there: scopeDir is inside a .kb/ directory (its .kb/
// would be a topic's folder, and a memory there a topic), or leftOut, the
// working-tree source's rule, says it never reads that directory (inside
// .git, ignored by git, another repository).
func Reachable(root, scopeDir, sub string, leftOut func(rel string) (string, error)) error {
	rel, err := filepath.Rel(root, scopeDir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return fmt.Errorf("%w: %s is outside the repository at %s", ErrUnreachable, scopeDir, root)
	}
	rel = filepath.ToSlash(rel)
	if slices.Contains(strings.Split(rel, "/"), knowledge.Dir) {
		return fmt.Errorf("%w: %s is inside a %s/ directory, where it would be a topic's folder; give the directory that holds the %s/", ErrUnreachable, rel, knowledge.Dir, knowledge.Dir)
	}
	if leftOut == nil {
		return nil
	}
	target := strings.TrimSuffix(knowledge.Dir+"/"+sub, "/")
	if rel != "." {
		target = rel + "/" + target
	}
	why, err := leftOut(target)
	if err != nil {
		return err
	}
	if why != "" {
		return fmt.Errorf("%w: %s: %s; write into a directory that builds read", ErrUnreachable, target, why)
	}
	return nil
}
