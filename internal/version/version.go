// Package version holds the release version of kbc and kbq.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is the release of both binaries. Bump it whenever the compiler
// turns the same documents into different index contents: it is part of
// the content key that decides whether an index can be reused.
const Version = "0.1.2"

// Describe returns the version with details and the commit the binary was
// built from, when the build recorded one: "0.1.2 (artifact format 2,
// commit 1a2b3c4d5e6f, modified)". A binary installed with go install
// names its module version instead.
func Describe(details ...string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		var commit, modified string
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				commit = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					modified = ", modified"
				}
			}
		}
		switch {
		case commit != "":
			details = append(details, fmt.Sprintf("commit %.12s%s", commit, modified))
		case info.Main.Version != "" && info.Main.Version != "(devel)":
			details = append(details, "module "+info.Main.Version)
		}
	}
	if len(details) == 0 {
		return Version
	}
	return Version + " (" + strings.Join(details, ", ") + ")"
}
