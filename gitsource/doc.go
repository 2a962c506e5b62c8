// Package gitsource reads the files a knowledge build compiles from: a
// commit's tree, git's index (what the next commit will hold) or the working
// tree, all with go-git, and plain directories for the global scope.
//
// Every file comes with its path, its git blob hash and, on request, its
// bytes, capped in size. Walks report every error they meet; a damaged
// repository never looks like a short one. Symlinks and submodules are
// reported with their Kind and never followed.
//
// The git CLI is used in one place only, as a stated fallback: go-git cannot
// decode a split or sparse index, and Staged then asks "git ls-files".
package gitsource
